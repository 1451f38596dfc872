public import Foundation
public import GatewayCore
import GatewayPostgres
public import Logging
public import PostgresNIO

/// The first operator token: from `GATEWAY_ADMIN_BOOTSTRAP_TOKEN` at start,
/// or `identity-gateway admin create-token`, both straight into the database.
public enum BootstrapToken {
    /// Stores `secret` as an operator token unless one exists already.
    static func seed(_ secret: AdminTokenSecret, client: PostgresClient, logger: Logger) async throws {
        let record = AdminTokenRecord(name: "bootstrap", scope: .operator)
        let tokens = AdminTokenRepository(client: client, logger: logger)
        let seeded = try await AuditedTransaction(client: client, logger: logger).run(
            recording: event(for: record), when: { $0 }
        ) { connection in
            try await tokens.seedOperatorToken(record, secret: secret, on: connection)
        }
        if seeded {
            logger.notice("seeded the bootstrap operator token", metadata: ["admin_token_id": "\(record.id)"])
        }
    }

    /// Creates a token directly in the database, audited with no actor.
    public static func create(
        name: String, scope: AdminScope, expiresAt: Date?, secret: AdminTokenSecret, client: PostgresClient,
        logger: Logger
    ) async throws -> AdminTokenRecord {
        let record = AdminTokenRecord(name: name, scope: scope, expiresAt: expiresAt)
        let tokens = AdminTokenRepository(client: client, logger: logger)
        try await AuditedTransaction(client: client, logger: logger).run(recording: event(for: record)) { connection in
            try await tokens.insert(record, secret: secret, on: connection)
        }
        return record
    }

    private static func event(for record: AdminTokenRecord) -> AuditEvent {
        var appID: AppID?
        if case .app(let scoped) = record.scope { appID = scoped }
        return AuditEvent(
            appID: appID, event: "admin.token.created", outcome: .success, requestID: "cli",
            detail: ["token_id": record.id.lowercasedText, "scope": record.scope.description, "via": "database"])
    }
}
