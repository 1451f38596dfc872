/// One counter to touch: a policy's window for one subject, in one app
/// (``AuditEvent/noApp`` for the deployment's own counters).
public struct CounterTouch: Sendable {
    /// What the touch does to the counter.
    public enum Mode: String, Sendable {
        /// Adds 1 whatever the verdict: the event happened.
        case count
        /// Adds as many of its ``CounterTouch/units`` as fit the limit (1
        /// for a reservation; more for a lease, a block a replica spends in
        /// memory); allowed exactly when at least one was added.
        case reserve
        /// Takes back ``CounterTouch/units`` that reservations added to this
        /// window (never below 0).
        case release
        /// Adds nothing; allowed when one more would fit.
        case read
    }

    public let appID: AppID
    public let window: SlidingWindow
    public let subject: String
    public let mode: Mode
    /// How many units a reservation asks for or a release gives back; 1 for
    /// the other modes.
    public let units: Int

    public init(appID: AppID, window: SlidingWindow, subject: String, mode: Mode, units: Int = 1) {
        precondition(units >= 1 && (units == 1 || mode == .reserve || mode == .release), "only reservations and releases move several units")
        self.appID = appID
        self.window = window
        self.subject = subject
        self.mode = mode
        self.units = units
    }

    /// This touch's undo: a release of the unit it reserved, in the same window.
    public var release: CounterTouch { CounterTouch(appID: appID, window: window, subject: subject, mode: .release, units: units) }

    /// The same counter, only read.
    public var asRead: CounterTouch { CounterTouch(appID: appID, window: window, subject: subject, mode: .read) }
}

/// A counter after a touch: the current window (including what the touch
/// added) and the previous window, storage's verdict, and the units a
/// reservation was granted (0 for the other modes).
public struct CounterReading: Sendable, Equatable {
    public let current: Int
    public let previous: Int
    public let allowed: Bool
    public let granted: Int

    public init(current: Int, previous: Int, allowed: Bool, granted: Int = 0) {
        self.current = current
        self.previous = previous
        self.allowed = allowed
        self.granted = granted
    }
}
