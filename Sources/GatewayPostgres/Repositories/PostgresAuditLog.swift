import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// Writes audit events to `audit_events`. ``record(_:on:)`` writes in the
/// caller's transaction, so admin changes commit with their row; token
/// requests go through ``AuditWriter``, which batches. Both build their
/// INSERT with ``insertQuery(_:)``.
public struct PostgresAuditLog: Sendable {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Writes one event; returns once it is committed.
    public func record(_ event: AuditEvent) async throws {
        try await client.query(try Self.insertQuery([event]), logger: logger)
    }

    /// Writes the event in the caller's transaction, so it commits with the change it describes.
    public func record(_ event: AuditEvent, on connection: PostgresConnection) async throws {
        try await connection.query(try Self.insertQuery([event]), logger: logger)
    }

    /// One multi-row INSERT for `events`, whatever their number.
    static func insertQuery(_ events: [AuditEvent]) throws -> PostgresQuery {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let details = try events.map { String(decoding: try encoder.encode($0.detail), as: UTF8.self) }
        // NULLs travel as empty strings: none of these columns holds a meaningful empty value.
        func text(_ value: String?) -> String { value ?? "" }
        return """
            INSERT INTO audit_events (app_id, event, outcome, reason, user_id, credential_type, key_id, client_ip,
                                      user_agent, request_id, actor, detail)
            SELECT app_id, event, outcome, nullif(reason, ''), nullif(user_id, ''), nullif(credential_type, ''),
                   nullif(key_id, '')::uuid, nullif(client_ip, '')::inet, nullif(user_agent, ''), request_id,
                   nullif(actor, '')::uuid, detail::jsonb
            FROM unnest(
                \(events.map { $0.appID?.uuid ?? AuditEvent.noApp })::uuid[], \(events.map(\.event))::text[],
                \(events.map(\.outcome.rawValue))::text[], \(events.map { text($0.reason) })::text[],
                \(events.map { text($0.userID) })::text[], \(events.map { text($0.credentialType) })::text[],
                \(events.map { text($0.keyID.map { $0.uuid.uuidString }) })::text[],
                \(events.map { text($0.clientIP) })::text[], \(events.map { text($0.userAgent) })::text[],
                \(events.map(\.requestID))::text[], \(events.map { text($0.actor?.uuidString) })::text[],
                \(details)::text[]
            ) AS e(app_id, event, outcome, reason, user_id, credential_type, key_id, client_ip, user_agent,
                   request_id, actor, detail)
            """
    }
}
