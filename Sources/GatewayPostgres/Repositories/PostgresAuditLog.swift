public import GatewayCore
public import Logging
public import PostgresNIO

/// Writes single audit events to `audit_events`. ``record(_:on:)`` writes in
/// the caller's transaction, so admin changes commit with their row; token
/// requests go through ``PostgresRequestLedger``, which batches. Both use
/// ``LedgerWriteStatement``.
public struct PostgresAuditLog: Sendable {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Writes one event; returns once it is committed.
    public func record(_ event: AuditEvent) async throws {
        try await client.committedExecute(LedgerWriteStatement(recording: event), logger: logger)
    }

    /// Writes the event in the caller's transaction, so it commits with the change it describes.
    public func record(_ event: AuditEvent, on connection: PostgresConnection) async throws {
        try await connection.tracedExecute(LedgerWriteStatement(recording: event), logger: logger)
    }
}
