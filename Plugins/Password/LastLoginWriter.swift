import Foundation
import GatewayCore
import Logging
import Synchronization

/// Writes one app's `last_login_at` behind its logins. A login notes its
/// time in memory and answers; `delay` after the first note, one statement
/// writes every note taken meanwhile. So a password login waits for no
/// write of its own (its audit row, written before its token, is the
/// durable record), and an app's busy second costs one statement.
///
/// `last_login_at` lags a login by up to `delay`. A write that fails is
/// logged and its notes dropped: each user's next login notes again, since
/// their stored time stayed old. A gateway that stops cleanly writes what it
/// noted (``PendingLastLogins/flushAll()``); one that dies loses at most
/// `delay` of them.
final class LastLoginWriter: Sendable {
    private struct State {
        var noted: [String: Date] = [:]
        var flushScheduled = false
    }

    let appID: AppID
    private let pending: PendingLastLogins
    private let delay: Duration
    private let logger: Logger
    private let write: @Sendable ([String: Date]) async throws -> Void
    private let state = Mutex(State())

    /// - Parameter write: stores the users' times (``PasswordUserStore/recordLogins(_:in:)``).
    init(
        appID: AppID, pending: PendingLastLogins, delay: Duration, logger: Logger,
        write: @escaping @Sendable ([String: Date]) async throws -> Void
    ) {
        self.appID = appID
        self.pending = pending
        self.delay = delay
        self.logger = logger
        self.write = write
    }

    /// A writer to `users`, each write within `databaseTimeout`.
    convenience init(
        appID: AppID, users: any PasswordUserStore, pending: PendingLastLogins, delay: Duration, databaseTimeout: Duration,
        logger: Logger
    ) {
        self.init(appID: appID, pending: pending, delay: delay, logger: logger) { times in
            try await withDatabaseTimeout(databaseTimeout) { try await users.recordLogins(times, in: appID) }
        }
    }

    /// Notes that `userID` signed in at `time`; written within `delay`.
    func note(_ userID: String, at time: Date = Date()) {
        let schedule = state.withLock { state -> Bool in
            state.noted[userID] = max(state.noted[userID] ?? time, time)
            guard !state.flushScheduled else { return false }
            state.flushScheduled = true
            return true
        }
        guard schedule else { return }
        pending.hold(self)
        let delay = self.delay
        // Detached: the write belongs to no login, so it joins none of their traces.
        Task.detached { [self] in
            try? await Task.sleep(for: delay)
            await flush()
        }
    }

    /// Writes every note taken so far in one statement.
    func flush() async {
        let noted = state.withLock { state -> [String: Date] in
            defer {
                state.noted = [:]
                state.flushScheduled = false
            }
            return state.noted
        }
        pending.release(self)
        guard !noted.isEmpty else { return }
        do {
            try await write(noted)
        } catch {
            logger.warning(
                "last_login_at not written", metadata: ["app_id": "\(appID)", "users": "\(noted.count)", "error": "\(error)"])
        }
    }
}

/// The writers holding notes not yet written, so that a gateway stopping
/// cleanly writes them (``PasswordPlugin/finish()``).
final class PendingLastLogins: Sendable {
    private let writers = Mutex<[ObjectIdentifier: LastLoginWriter]>([:])

    func hold(_ writer: LastLoginWriter) {
        writers.withLock { $0[ObjectIdentifier(writer)] = writer }
    }

    func release(_ writer: LastLoginWriter) {
        _ = writers.withLock { $0.removeValue(forKey: ObjectIdentifier(writer)) }
    }

    /// Writes every writer's notes now.
    func flushAll() async {
        let held = writers.withLock { Array($0.values) }
        for writer in held { await writer.flush() }
    }
}
