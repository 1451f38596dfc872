public import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `admin_tokens` table.
public struct AdminTokenRepository: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func insert(_ record: AdminTokenRecord, secret: AdminTokenSecret, on connection: PostgresConnection) async throws {
        try await connection.tracedQuery(
            """
            INSERT INTO admin_tokens (token_id, name, scope, secret_hash, created_at, expires_at)
            VALUES (\(record.id), \(record.name), \(record.scope.description), \(ByteBuffer(bytes: secret.digest)),
                    \(record.createdAt), \(record.expiresAt))
            """, logger: logger)
    }

    /// The live token with this secret (not revoked, not expired), marking it used.
    public func authenticate(_ secret: AdminTokenSecret) async throws -> AdminTokenRecord? {
        let rows = try await client.tracedQuery(
            """
            UPDATE admin_tokens SET last_used_at = now()
            WHERE secret_hash = \(ByteBuffer(bytes: secret.digest)) AND revoked_at IS NULL
              AND (expires_at IS NULL OR expires_at > now())
            RETURNING \(unescaped: Self.columns)
            """, logger: logger)
        return try Self.records(rows).first
    }

    /// Tokens in id order after `cursor`.
    public func list(after cursor: UUID?, limit: Int) async throws -> [AdminTokenRecord] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.columns) FROM admin_tokens
            WHERE (\(cursor)::uuid IS NULL OR token_id > \(cursor))
            ORDER BY token_id LIMIT \(limit)
            """, logger: logger)
        return try Self.records(rows)
    }

    /// Revokes a live token; `false` when there is none with that id.
    public func revoke(_ id: UUID, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.tracedQuery(
            "UPDATE admin_tokens SET revoked_at = now() WHERE token_id = \(id) AND revoked_at IS NULL RETURNING token_id",
            logger: logger)
        return !rows.isEmpty
    }

    /// Stores `secret` as an operator token unless an operator token exists,
    /// under a transaction-scoped advisory lock so replicas starting together
    /// seed it once. `false` when one existed.
    public func seedOperatorToken(
        _ record: AdminTokenRecord, secret: AdminTokenSecret, on connection: PostgresConnection
    ) async throws -> Bool {
        try await connection.tracedQuery("SELECT pg_advisory_xact_lock(\(Self.bootstrapLockKey))", logger: logger)
        let rows = try await connection.tracedQuery("SELECT 1 FROM admin_tokens WHERE scope = 'operator' LIMIT 1", logger: logger)
        for _ in rows { return false }
        try await insert(record, secret: secret, on: connection)
        return true
    }

    /// "idgw" + "boot".
    static let bootstrapLockKey: Int64 = 0x6964_6777_626f_6f74

    private static let columns = "token_id, name, scope, created_at, expires_at, revoked_at, last_used_at"

    private static func records(_ rows: [PostgresRow]) throws -> [AdminTokenRecord] {
        var records: [AdminTokenRecord] = []
        for (id, name, scope, created, expires, revoked, used)
            in try rows.decode((UUID, String, String, Date, Date?, Date?, Date?).self)
        {
            guard let scope = AdminScope(scope) else { throw UnreadableRow("admin token \(id) has scope '\(scope)'") }
            records.append(
                AdminTokenRecord(
                    id: id, name: name, scope: scope, createdAt: created, expiresAt: expires, revokedAt: revoked,
                    lastUsedAt: used))
        }
        return records
    }
}
