import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// Writes one audit event at a time to `audit_events`, for admin changes
/// that commit in the same transaction. Token requests go through
/// ``AuditWriter``, which batches. ``record(_:)`` returns once the row is committed.
public struct PostgresAuditLog: Sendable {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func record(_ event: AuditEvent) async throws {
        try await client.withConnection { try await record(event, on: $0) }
    }

    /// Writes the event in the caller's transaction, so it commits with the change it describes.
    public func record(_ event: AuditEvent, on connection: PostgresConnection) async throws {
        let appID = event.appID?.uuid ?? AuditEvent.noApp
        let detail = String(decoding: try JSONEncoder().encode(event.detail), as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO audit_events (app_id, event, outcome, reason, user_id, credential_type, key_id, client_ip,
                                      user_agent, request_id, actor, detail)
            VALUES (\(appID), \(event.event), \(event.outcome.rawValue), \(event.reason), \(event.userID),
                    \(event.credentialType), \(event.keyID?.uuid), \(event.clientIP)::inet, \(event.userAgent),
                    \(event.requestID), \(event.actor), \(detail)::jsonb)
            """, logger: logger)
    }
}
