public import GatewayCore
import Synchronization

/// What a password hash is for, which decides when it runs (``HashTurns``).
public enum PasswordHashWork: Sendable, Hashable {
    /// A client waits for it: a login.
    case login(AppID)
    /// Nobody waits on a socket for it: admin writes, imports, migrated users.
    case admin(AppID)
}

/// Whose password hash runs next on the hashing threads. Logins come first:
/// admin work (a user written, an import, a migrated user's hash) runs only
/// when no login waits. Within each, apps take turns, so one app's queue of
/// thousands is served one hash at a time between everyone else's. And one
/// app's admin work holds at most ``backgroundPerApp`` of the threads at once,
/// so an import never takes them all.
final class HashTurns: Sendable {
    typealias Work = PasswordHashWork

    /// One queue of waiters per app, and the apps in the order they take turns.
    private struct Lane {
        var order: [AppID] = []
        var waiting: [AppID: [CheckedContinuation<Void, Never>]] = [:]

        var isEmpty: Bool { order.isEmpty }

        mutating func append(_ continuation: CheckedContinuation<Void, Never>, for appID: AppID) {
            if waiting[appID] == nil { order.append(appID) }
            waiting[appID, default: []].append(continuation)
        }

        /// The first waiter of the first app in turn that `allowed` lets run;
        /// that app goes to the back of the order.
        mutating func next(where allowed: (AppID) -> Bool) -> (AppID, CheckedContinuation<Void, Never>)? {
            guard let position = order.firstIndex(where: allowed) else { return nil }
            let appID = order.remove(at: position)
            var queue = waiting[appID]!
            let continuation = queue.removeFirst()
            if queue.isEmpty {
                waiting[appID] = nil
            } else {
                waiting[appID] = queue
                order.append(appID)
            }
            return (appID, continuation)
        }
    }

    private struct State {
        var running = 0
        var adminRunning: [AppID: Int] = [:]
        var logins = Lane()
        var admin = Lane()
    }

    let threads: Int
    let backgroundPerApp: Int
    private let state = Mutex(State())

    init(threads: Int, backgroundPerApp: Int? = nil) {
        precondition(threads >= 1)
        self.threads = threads
        self.backgroundPerApp = max(1, backgroundPerApp ?? threads / 2)
    }

    /// Hashes running or waiting for their turn.
    var count: Int {
        state.withLock { state in
            state.running + state.logins.waiting.values.map(\.count).reduce(0, +) + state.admin.waiting.values.map(\.count).reduce(0, +)
        }
    }

    /// Waits for `work`'s turn on a thread; pair with ``finished(_:)``.
    func take(_ work: Work) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                switch work {
                case .login(let appID): state.logins.append(continuation, for: appID)
                case .admin(let appID): state.admin.append(continuation, for: appID)
                }
                return dispatch(&state)
            }
            for turn in ready { turn.resume() }
        }
    }

    /// `work` is done with its thread: the next in turn gets it.
    func finished(_ work: Work) {
        let ready = state.withLock { state in
            state.running -= 1
            if case .admin(let appID) = work {
                state.adminRunning[appID, default: 1] -= 1
                if state.adminRunning[appID] == 0 { state.adminRunning[appID] = nil }
            }
            return dispatch(&state)
        }
        for turn in ready { turn.resume() }
    }

    /// Hands free threads out: logins first, then admin work of apps under their share.
    private func dispatch(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        var ready: [CheckedContinuation<Void, Never>] = []
        while state.running < threads {
            if let (_, login) = state.logins.next(where: { _ in true }) {
                ready.append(login)
            } else if let (appID, admin) = state.admin.next(where: { [adminRunning = state.adminRunning, backgroundPerApp] in
                adminRunning[$0, default: 0] < backgroundPerApp
            }) {
                state.adminRunning[appID, default: 0] += 1
                ready.append(admin)
            } else {
                break
            }
            state.running += 1
        }
        return ready
    }
}
