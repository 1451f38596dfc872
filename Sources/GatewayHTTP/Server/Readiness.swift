import Synchronization

/// Whether this replica should get traffic: it has started (schema checked),
/// its app-change listener is connected (so its cache cannot go stale
/// unnoticed), and it is not draining for shutdown. `/readyz` adds a live
/// database check.
public final class Readiness: Sendable {
    private struct State {
        var started = false
        var listening = false
        var draining = false
    }

    private let state = Mutex(State())

    public init() {}

    /// The schema is current and the server is about to accept requests.
    public func markStarted() { state.withLock { $0.started = true } }

    /// The change listener connected (`true`) or lost its connection.
    public func setListening(_ listening: Bool) { state.withLock { $0.listening = listening } }

    /// Shutdown began: from now on the load balancer should send nothing new.
    public func markDraining() { state.withLock { $0.draining = true } }

    /// Why the replica is not ready, or `nil`.
    public var problem: String? {
        state.withLock { state in
            if state.draining { return "draining: shutting down" }
            if !state.started { return "starting: the schema has not been checked yet" }
            if !state.listening { return "the app-change listener is not connected to the database" }
            return nil
        }
    }
}
