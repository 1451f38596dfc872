public import GatewayCore

/// The outbox's rows as a worker uses them: in PostgreSQL (``PostgresOutbox``)
/// or in memory (``MemoryOutbox``).
public protocol OutboxStore: Sendable {
    /// Queues a message that goes with no code (a notice), to live
    /// `lifetimeSeconds` before it is given up undelivered; committed when this returns.
    func queue(_ message: OutboxMessage, in appID: AppID, lifetimeSeconds: Int) async throws

    /// Takes the lease of up to `limit` due messages of `channel` (queued,
    /// their next attempt due, no live lease), oldest first; a message is
    /// leased to one worker at a time across replicas.
    func claim(channel: String, limit: Int, lease: Duration) async throws -> [ClaimedMessage]

    /// Finishes attempts (a worker's batch), each with its audit row, in
    /// one transaction; for each, `false` (and no row) when its lease ran
    /// out and another worker took the message.
    func finish(_ ends: [OutboxAttemptEnd]) async throws -> [Bool]

    /// Gives up every message still queued for `userID` (they were deleted
    /// or disabled), payloads dropped, with `event` once when any was; how many.
    /// A message already leased may still go out: its delivery has begun.
    func cancel(for userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Int
}

/// How one attempt at a message ended, and the audit row that says so.
public struct OutboxAttemptEnd: Sendable {
    public let message: ClaimedMessage
    public let finish: OutboxFinish
    public let row: AuditEvent

    public init(_ message: ClaimedMessage, _ finish: OutboxFinish, row: AuditEvent) {
        self.message = message
        self.finish = finish
        self.row = row
    }
}
