public import GatewayCore
public import Logging
public import PostgresNIO

/// Writes audit events to `audit_events`. ``record(_:)`` returns only once the
/// row is committed: a caller that must not act unaudited awaits it first.
public struct PostgresAuditLog: Sendable {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func record(_ event: AuditEvent) async throws {
        let appID = event.appID?.uuid ?? AuditEvent.noApp
        try await client.query(
            """
            INSERT INTO audit_events (app_id, event, outcome, reason, user_id, credential_type, key_id, request_id)
            VALUES (\(appID), \(event.event), \(event.outcome.rawValue), \(event.reason), \(event.userID),
                    \(event.credentialType), \(event.keyID?.uuid), \(event.requestID))
            """, logger: logger)
    }
}
