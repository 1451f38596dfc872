import GatewayCore
import Synchronization

/// How long recent SMS deliveries took, so that a request that sends no SMS
/// (a number bound to no user) is answered after as long as one that does:
/// the time an answer takes tells nobody whether a number has an account.
///
/// Keeps the last ``kept`` delivery times of each app (of at most
/// ``maximumApps`` apps) and of the whole process. ``pause(for:)`` is one of
/// the app's times drawn at random, so the waits follow the same
/// distribution as the deliveries; an app with none yet on this replica
/// borrows the process's, and a replica that has delivered nothing waits
/// nothing.
final class DeliveryTimes: Sendable {
    static let kept = 32
    static let maximumApps = 10_000

    /// The newest times, oldest overwritten first.
    private struct Recent {
        var times: [Duration] = []
        var next = 0

        mutating func add(_ time: Duration) {
            if times.count < DeliveryTimes.kept {
                times.append(time)
            } else {
                times[next] = time
                next = (next + 1) % DeliveryTimes.kept
            }
        }
    }

    private struct State {
        var byApp: [AppID: Recent] = [:]
        var all = Recent()
    }

    private let state = Mutex(State())

    init() {}

    /// Notes that a delivery for `appID` took `time`.
    func record(_ time: Duration, for appID: AppID) {
        state.withLock { state in
            state.all.add(time)
            if state.byApp[appID] == nil, state.byApp.count >= Self.maximumApps {
                state.byApp.removeAll(keepingCapacity: true)
            }
            state.byApp[appID, default: Recent()].add(time)
        }
    }

    /// How long to wait in place of a delivery for `appID`.
    func pause(for appID: AppID) -> Duration {
        state.withLock { state in
            (state.byApp[appID]?.times.randomElement() ?? state.all.times.randomElement()) ?? .zero
        }
    }
}
