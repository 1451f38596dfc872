public import Foundation
import Synchronization

/// Stops calling a service that keeps failing: after `failures` failures in
/// a row from one subject (an app's webhook), calls for that subject fail
/// fast for `coolDown`; then one trial call goes through, and its result
/// closes the breaker or opens it for another cool-down. Each subject's state
/// is its own, and lives in this process only (each replica learns on its own).
public final class CircuitBreaker<Subject: Hashable & Sendable>: Sendable {
    public struct Settings: Sendable, Equatable {
        public let failures: Int
        public let coolDown: Duration

        public init(failures: Int, coolDown: Duration) {
            self.failures = failures
            self.coolDown = coolDown
        }
    }

    private struct State {
        var failuresInARow = 0
        /// Set while open: calls fail fast until then.
        var openUntil: Date?
        var coolDown: TimeInterval = 0
    }

    private let states = Mutex<[Subject: State]>([:])
    private let now: @Sendable () -> Date
    /// Told each time a subject's breaker opens (`true`) or closes (`false`), for a gauge.
    private let onChange: @Sendable (Subject, _ isOpen: Bool) -> Void

    public init(now: @escaping @Sendable () -> Date = Date.init, onChange: @escaping @Sendable (Subject, Bool) -> Void = { _, _ in }) {
        self.now = now
        self.onChange = onChange
    }

    /// Whether a call for `subject` may go out now. `false` while the breaker
    /// is open; after the cool-down, `true` once (the trial), and `false` to
    /// the others until the trial's result is recorded or another cool-down
    /// has passed (a trial whose result never came).
    public func permits(_ subject: Subject) -> Bool {
        let time = now()
        return states.withLock { states in
            guard var state = states[subject], let openUntil = state.openUntil else { return true }
            guard time >= openUntil else { return false }
            state.openUntil = time.addingTimeInterval(state.coolDown)
            states[subject] = state
            return true
        }
    }

    /// The call went through: the breaker closes.
    public func recordSuccess(_ subject: Subject) {
        let wasOpen = states.withLock { states in states.removeValue(forKey: subject)?.openUntil != nil }
        if wasOpen { onChange(subject, false) }
    }

    /// The call failed: after `settings.failures` in a row (or a failed
    /// trial) the breaker opens for `settings.coolDown`.
    public func recordFailure(_ subject: Subject, _ settings: Settings) {
        let time = now()
        let opened = states.withLock { states -> Bool in
            var state = states[subject] ?? State()
            state.failuresInARow += 1
            let wasOpen = state.openUntil != nil
            if wasOpen || state.failuresInARow >= settings.failures {
                state.coolDown = settings.coolDown / .seconds(1)
                state.openUntil = time.addingTimeInterval(state.coolDown)
            }
            states[subject] = state
            return !wasOpen && state.openUntil != nil
        }
        if opened { onChange(subject, true) }
    }

    /// Whether the breaker of `subject` is open (a trial may be due).
    public func isOpen(_ subject: Subject) -> Bool {
        states.withLock { $0[subject]?.openUntil != nil }
    }
}
