import Foundation
public import GatewayCore
import Logging

/// A plugin that keeps something under a user id (the passkey plugin's
/// passkeys, the phone plugin's bound numbers): it hears every
/// ``UserChange`` of an app it serves, whichever route made it.
public protocol HearsUserChanges: Sendable {
    /// Brings what this plugin keeps of `change.userID` in line with the
    /// change (a deleted user's credentials removed, say), each change with
    /// the row ``UserChange/row(_:credentialType:detail:)`` makes; how many
    /// things changed. Called again with the same change, it changes
    /// nothing more: a route that failed half way is sent again.
    func hear(_ change: UserChange, services: PluginServices) async throws -> Int
}

/// The one way a user's change reaches everything that holds something of
/// theirs: the sessions first, then the second factor and tickets and
/// every plugin that ``HearsUserChanges``, in that order. A change is in
/// the ``UserChangeJournal`` before any holder hears it (a directory write
/// journals the changes it makes in its own transaction), and leaves it
/// once every holder has: a request that dies or fails half way leaves its
/// change to a sweep on any replica (``sweepUntilCancelled(every:)``), and
/// each holder is idempotent, so hearing a change twice is harmless. The
/// sessions end first: a credential a session added before the holders
/// that follow is removed by them, and one it adds after finds its session
/// ended and takes itself back (``SessionHolders/endedReason(of:in:)``).
public struct UserLifecycle: Sendable {
    /// One holder's part: brings what it keeps in line with the change; how many things changed.
    public typealias Hearer = @Sendable (UserChange) async throws -> Int

    private let credentials: [Hearer]
    private let sessions: Hearer
    private let journal: any UserChangeJournal
    private let logger: Logger

    /// - Parameters:
    ///   - secondFactor: the user's factor and their sign-ins' tickets.
    ///   - plugins: each of them that ``HearsUserChanges`` hears, in their order.
    ///   - services: what the plugins are lent; its journal is the lifecycle's.
    ///   - sessions: ends the user's sessions where the change ends them; how many.
    public init(
        secondFactor: @escaping Hearer, plugins: [any CredentialPlugin], services: PluginServices,
        sessions: @escaping Hearer
    ) {
        let hearers = plugins.compactMap { $0 as? any HearsUserChanges }
        credentials =
            [secondFactor]
            + hearers.map { hearer in { @Sendable change in try await hearer.hear(change, services: services) } }
        self.sessions = sessions
        self.journal = services.userChanges
        self.logger = services.logger
    }

    /// What a change came to.
    public struct Outcome: Sendable, Equatable {
        /// Credentials, factors and tickets changed or removed.
        public var credentials = 0
        /// Sessions ended.
        public var sessions = 0
    }

    /// Tells every holder of `change.userID`'s things about a change its
    /// directory journaled with its write, then takes it off the journal.
    /// Stops at the first failure, what was done staying done and the
    /// change journaled for a sweep.
    @discardableResult
    public func apply(_ change: UserChange) async throws -> Outcome {
        var outcome = Outcome()
        outcome.sessions = try await sessions(change)
        for hearer in credentials { outcome.credentials += try await hearer(change) }
        try await journal.finish(change)
        return outcome
    }

    /// ``apply(_:)`` for a change no directory write carries (an admin
    /// ending every session, a user with no directory row leaving): it is
    /// journaled first, alone.
    @discardableResult
    public func journalAndApply(_ change: UserChange) async throws -> Outcome {
        try await journal.record([change])
        return try await apply(change)
    }

    /// One sweep: the changes journaled at least `age` ago and not finished
    /// (their request died or failed half way), told to every holder again
    /// and finished; how many were. A change whose holders fail again stays
    /// for a later sweep, after its claim's lease.
    @discardableResult
    public func finishUnfinished(olderThan age: Duration, limit: Int = 100) async throws -> Int {
        var finished = 0
        for change in try await journal.claimUnfinished(olderThan: age, limit: limit, lease: .seconds(60)) {
            do {
                try await apply(change)
                finished += 1
            } catch {
                logger.warning(
                    "a user change left by its request is still not heard by every holder; a later sweep tries again",
                    metadata: [
                        "app_id": "\(change.appID)", "change": "\(change.kind.rawValue)", "request_id": "\(change.requestID)",
                        "error": "\(String(reflecting: error))",
                    ])
            }
        }
        return finished
    }

    /// Sweeps every `interval` (``finishUnfinished(olderThan:limit:)``, the
    /// changes older than `age`) until the task is cancelled; every replica
    /// runs one, and their claims keep them from taking the same change.
    public func sweepUntilCancelled(every interval: Duration = .seconds(10), olderThan age: Duration = UserChangeSweep.age) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
                while try await finishUnfinished(olderThan: age) > 0 {}
            } catch is CancellationError {
                return
            } catch {
                logger.warning("the sweep of unfinished user changes failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}

/// How long a user change may wait for the request that made it before a
/// sweep takes it over: long past any request's database timeouts.
public enum UserChangeSweep {
    public static let age = Duration.seconds(30)
}
