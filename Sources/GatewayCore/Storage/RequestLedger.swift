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
    /// its row, and a refused request leaves none. `session` changes a
    /// session in that write too (``SessionChange``): a session starts only
    /// with its row, a rotation must be made for the row to be written, a
    /// revocation is made whatever the verdicts.
    func countAndRecord(_ touches: [CounterTouch], ifAllowed event: AuditEvent, changing session: SessionChange?)
        async throws -> Admission

    /// Returns once `event` is durable; throws (503 `unavailable`) when it
    /// cannot be, and the caller must then not act as if it were.
    func record(_ event: AuditEvent) async throws

    /// Records an event whose request is answered whatever becomes of its row
    /// (a denial, a code already sent): waits for it like ``record(_:)``
    /// while storage answers, otherwise keeps it to be written once storage
    /// is back. Never throws.
    func recordEventually(_ event: AuditEvent) async
}

extension RequestLedger {
    /// ``countAndRecord(_:ifAllowed:changing:)`` with no session to change.
    public func countAndRecord(_ touches: [CounterTouch], ifAllowed event: AuditEvent) async throws -> Admission {
        try await countAndRecord(touches, ifAllowed: event, changing: nil)
    }
}

/// What ``RequestLedger/countAndRecord(_:ifAllowed:changing:)`` found.
public struct Admission: Sendable, Equatable {
    /// In the order of the touches.
    public let counts: [CounterReading]
    /// Every touch's verdict allowed and the session change, if any, was
    /// made (a rotation's token was still the live one), so the event was recorded.
    public let admitted: Bool
    /// The session change was made: a session started, a token spent, a
    /// session ended (`false` for one already ended); `false` without one.
    public let sessionChanged: Bool

    public init(counts: [CounterReading], admitted: Bool, sessionChanged: Bool = false) {
        self.counts = counts
        self.admitted = admitted
        self.sessionChanged = sessionChanged
    }
}
