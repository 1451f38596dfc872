import Foundation
import GatewayCore
import GatewayPostgres
import Logging
import PostgresNIO

/// The ID tokens each app has accepted, in PostgreSQL (`id_token_uses`):
/// ``firstUse(of:in:)`` is the one statement that decides whether a token is
/// taken, so two replicas given the same token at once take it once.
struct PostgresIDTokenUses: IDTokenUseStore {
    let client: PostgresClient
    let logger: Logger
    let timeout: Duration

    /// The same statement drops up to 100 of the app's records whose tokens have
    /// expired, so the table holds about the tokens still alive.
    func firstUse(of token: VerifiedIDToken, in appID: AppID) async throws -> Bool {
        let digest = ByteBuffer(bytes: token.digest)
        let expiresAt = Date(timeIntervalSince1970: token.expiresAt)
        let client = self.client
        let logger = self.logger
        return try await withDatabaseTimeout(timeout) {
            // Committed before the answer: a token taken is taken for good, whatever happens to the connection.
            let rows = try await client.committedQuery(
                """
                WITH expired AS (
                    DELETE FROM id_token_uses WHERE ctid IN (
                        SELECT ctid FROM id_token_uses
                        WHERE app_id = \(appID.uuid) AND expires_at < now() - interval '1 minute' LIMIT 100)
                )
                INSERT INTO id_token_uses (app_id, token_sha256, expires_at)
                VALUES (\(appID.uuid), \(digest), \(expiresAt))
                ON CONFLICT (app_id, token_sha256) DO NOTHING
                RETURNING 1
                """, logger: logger)
            return !rows.isEmpty
        }
    }
}
