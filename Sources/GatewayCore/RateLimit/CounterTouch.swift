/// One counter to touch: a policy's window for one subject, in one app
/// (``AuditEvent/noApp`` for the deployment's own counters).
public struct CounterTouch: Sendable {
    /// What the touch does to the counter.
    public enum Mode: String, Sendable {
        /// Adds 1 whatever the verdict: the event happened.
        case count
        /// Adds 1 only if it fits the limit; allowed exactly when it was added.
        case reserve
        /// Takes back 1 an earlier reservation added to this window (never below 0).
        case release
        /// Adds nothing; allowed when one more would fit.
        case read
    }

    public let appID: AppID
    public let window: SlidingWindow
    public let subject: String
    public let mode: Mode

    public init(appID: AppID, window: SlidingWindow, subject: String, mode: Mode) {
        self.appID = appID
        self.window = window
        self.subject = subject
        self.mode = mode
    }

    /// This touch's undo: a release of the unit it reserved, in the same window.
    public var release: CounterTouch { CounterTouch(appID: appID, window: window, subject: subject, mode: .release) }
}

/// A counter after a touch: the current window (including what the touch
/// added) and the previous window, and storage's verdict.
public struct CounterReading: Sendable, Equatable {
    public let current: Int
    public let previous: Int
    public let allowed: Bool

    public init(current: Int, previous: Int, allowed: Bool) {
        self.current = current
        self.previous = previous
        self.allowed = allowed
    }
}
