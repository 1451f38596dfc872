import Foundation
import GatewayCore
import GatewayPostgres
import Logging
import PostgresNIO

/// The first operator token: from `GATEWAY_ADMIN_BOOTSTRAP_TOKEN` at start,
/// or `identity-gateway admin create-token`, both straight into the database.
enum BootstrapToken {
    /// Stores `secret` as an operator token unless one exists already.
    static func seed(_ secret: AdminTokenSecret, client: PostgresClient, logger: Logger) async throws {
        let tokens = AdminTokenRepository(client: client, logger: logger)
        guard try await !tokens.hasOperatorToken() else { return }
        let record = try await create(name: "bootstrap", scope: .operator, expiresAt: nil, secret: secret, client: client, logger: logger)
        logger.notice("seeded the bootstrap operator token", metadata: ["admin_token_id": "\(record.id)"])
    }

    /// Creates a token directly in the database, audited with no actor.
    static func create(
        name: String, scope: AdminScope, expiresAt: Date?, secret: AdminTokenSecret, client: PostgresClient,
        logger: Logger
    ) async throws -> AdminTokenRecord {
        let record = AdminTokenRecord(name: name, scope: scope, expiresAt: expiresAt)
        var appID: AppID?
        if case .app(let scoped) = scope { appID = scoped }
        let event = AuditEvent(
            appID: appID, event: "admin.token.created", outcome: .success, requestID: "cli",
            detail: ["token_id": record.id.uuidString.lowercased(), "scope": scope.description, "via": "database"])
        try await AuditedTransaction(client: client, logger: logger).run(recording: event) { connection in
            try await AdminTokenRepository(client: client, logger: logger).insert(record, secret: secret, on: connection)
        }
        return record
    }
}
