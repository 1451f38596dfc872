import GatewayCore
import Synchronization

/// The moves of users into the password directory under way
/// (`migrate_on_success`): each runs in the background, off the token
/// response's path; at most one per user at a time, and at most
/// ``maximumRunning`` at once (more are skipped: the user's next login
/// tries again).
final class UserMigrations: Sendable {
    static let maximumRunning = 32

    private struct Key: Hashable {
        let appID: AppID
        let userID: String
    }

    private let state = Mutex<(running: Set<Key>, waiting: [CheckedContinuation<Void, Never>])>(([], []))

    /// Starts `work` for the user unless a move of theirs is running or too
    /// many are; whether it started.
    @discardableResult
    func start(_ userID: String, in appID: AppID, _ work: @escaping @Sendable () async -> Void) -> Bool {
        let key = Key(appID: appID, userID: userID)
        let started = state.withLock { state in
            guard state.running.count < Self.maximumRunning, !state.running.contains(key) else { return false }
            state.running.insert(key)
            return true
        }
        guard started else { return false }
        Task {
            await work()
            let waiting = self.state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.running.remove(key)
                guard state.running.isEmpty else { return [] }
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }
        return true
    }

    /// Returns once no move is running (for tests and shutdown).
    func idle() async {
        await withCheckedContinuation { continuation in
            let isIdle = state.withLock { state in
                if state.running.isEmpty { return true }
                state.waiting.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }
}
