import Synchronization

/// Whether this replica should get traffic: it has started (schema checked),
/// its app-change listener is connected (so its cache cannot go stale
/// unnoticed), and it is not draining for shutdown. `/readyz` adds a live
/// database check.
///
/// A database that fails over takes the listener's connection and fails the
/// check for a few seconds while requests wait for it (the database retry
/// window): for `outageGrace` the replica stays in rotation, since a load
/// balancer that took every replica out would answer those requests with
/// errors of its own. Past it, it leaves.
public final class Readiness: Sendable {
    private struct State {
        var started = false
        /// Since when the listener has been away (`nil`: it listens); it is away until it first connects.
        var notListeningSince: ContinuousClock.Instant? = .now
        var everListened = false
        /// Since when the database has not answered `/readyz`'s check.
        var databaseFailingSince: ContinuousClock.Instant?
        var draining = false
    }

    private let state = Mutex(State())
    private let outageGrace: Duration

    public init(outageGrace: Duration = .zero) {
        self.outageGrace = outageGrace
    }

    /// The schema is current and the server is about to accept requests.
    public func markStarted() { state.withLock { $0.started = true } }

    /// The change listener connected (`true`) or lost its connection.
    public func setListening(_ listening: Bool) {
        state.withLock { state in
            if listening {
                state.notListeningSince = nil
                state.everListened = true
            } else if state.notListeningSince == nil {
                state.notListeningSince = .now
            }
        }
    }

    /// Notes whether the database answered `/readyz`'s check; `true` while
    /// the replica is still ready (it answered, or has failed for less than the grace).
    public func noteDatabase(answered: Bool) -> Bool {
        state.withLock { state in
            if answered {
                state.databaseFailingSince = nil
                return true
            }
            let since = state.databaseFailingSince ?? .now
            state.databaseFailingSince = since
            return ContinuousClock.now - since < outageGrace
        }
    }

    /// Shutdown began: from now on the load balancer should send nothing new.
    public func markDraining() { state.withLock { $0.draining = true } }

    /// Why the replica is not ready, or `nil`.
    public var problem: String? {
        state.withLock { state in
            if state.draining { return "draining: shutting down" }
            if !state.started { return "starting: the schema has not been checked yet" }
            if let since = state.notListeningSince, !state.everListened || ContinuousClock.now - since >= outageGrace {
                return "the app-change listener is not connected to the database"
            }
            return nil
        }
    }
}
