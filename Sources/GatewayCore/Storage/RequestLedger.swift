/// Where requests on the public routes are counted against their rate limits
/// and recorded in the audit trail. The HTTP layer decides what to count and
/// what to record; the ledger makes it durable (PostgreSQL, group-committed,
/// in `GatewayPostgres`).
public protocol RequestLedger: Sendable {
    /// Applies the touches and reads every counter; the answer is in the
    /// order of `touches`.
    func count(_ touches: [CounterTouch]) async throws -> [CounterReading]

    /// Does what ``count(_:)`` does and, in the same write, records `event`
    /// if every touch's verdict allows: a token is never answered without
    /// its row, and a refused request leaves none.
    func countAndRecord(_ touches: [CounterTouch], ifAllowed event: AuditEvent) async throws -> Admission

    /// Returns once `event` is durable; throws (503 `unavailable`) when it
    /// cannot be, and the caller must then not act as if it were.
    func record(_ event: AuditEvent) async throws

    /// Records an event whose request is answered whatever becomes of its row
    /// (a denial, a code already sent): waits for it like ``record(_:)``
    /// while storage answers, otherwise keeps it to be written once storage
    /// is back. Never throws.
    func recordEventually(_ event: AuditEvent) async
}

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

/// What ``RequestLedger/countAndRecord(_:ifAllowed:)`` found.
public struct Admission: Sendable, Equatable {
    /// In the order of the touches.
    public let counts: [CounterReading]
    /// Every touch's verdict allowed, so the event was recorded.
    public let admitted: Bool

    public init(counts: [CounterReading], admitted: Bool) {
        self.counts = counts
        self.admitted = admitted
    }
}
