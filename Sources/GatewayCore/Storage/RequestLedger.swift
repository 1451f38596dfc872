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
