public import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `sessions` table, read by the token path and ended by the admin API
/// and the sign-out route. Sessions start and rotate in the request ledger's
/// statement (``SessionChangesSQL``); ended ones are deleted by
/// ``AuditMaintenance`` a while after they end.
public struct PostgresSessions: SessionStore {
    let client: PostgresClient
    let logger: Logger
    /// How a refresh's read of its session waits for the database.
    let retry: DatabaseRetry

    public init(client: PostgresClient, logger: Logger, retry: DatabaseRetry = .once(within: .seconds(2))) {
        self.client = client
        self.logger = logger
        self.retry = retry
    }

    static let columns = """
        app_id, session_id, user_id, profile::text, credential_type, methods, auth_time, device_label, created_at,
        last_used_at, idle_expires_at, expires_at, generation, token_sha256, previous_sha256, rotated_at, revoked_at,
        revoked_reason
        """

    public func find(_ sessionID: UUID, in appID: AppID) async throws -> SessionLookup {
        let (client, logger) = (client, logger)
        return try await retry.run {
            guard let lookup = try await client.tracedExecute(Lookup(appID: appID, sessionID: sessionID), logger: logger).first
            else { throw UnreadableRow("the session lookup answered no row") }
            return lookup
        }
    }

    /// A refresh's read of its session, prepared once per connection: it is
    /// on every refresh's path. One row always, with the database's clock,
    /// the session's columns NULL when there is none.
    struct Lookup: PostgresPreparedStatement {
        typealias Row = SessionLookup
        static let name = "session_lookup"
        static let sql = """
            SELECT now(), \(PostgresSessions.columns)
            FROM (SELECT now()) AS clock LEFT JOIN sessions ON app_id = $1 AND session_id = $2
            """

        let appID: AppID
        let sessionID: UUID

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(appID.uuid)
            bindings.append(sessionID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> SessionLookup {
            let columns = row.makeRandomAccess()
            let now = try columns[0].decode(Date.self)
            let present = try columns[1].decode(UUID?.self) != nil
            return SessionLookup(session: present ? try PostgresSessions.session(row, skipping: 1) : nil, now: now)
        }
    }

    public func list(of userID: String, in appID: AppID, includingEnded: Bool, at now: Date) async throws -> [StoredSession] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.columns) FROM sessions
            WHERE app_id = \(appID.uuid) AND user_id = \(userID)
              AND (\(includingEnded) OR (revoked_at IS NULL AND expires_at > \(now) AND idle_expires_at > \(now)))
            ORDER BY created_at DESC, session_id
            LIMIT 1000
            """, logger: logger)
        var sessions: [StoredSession] = []
        for row in rows { sessions.append(try Self.session(row, skipping: 0)) }
        return sessions
    }

    public func revoke(_ scope: SessionScope, reason: String, recording row: AuditEvent) async throws -> Int {
        let (appID, sessionID, userID, credentialType, kept): (AppID, UUID?, String?, String?, UUID?) =
            switch scope {
            case .session(let sessionID, let appID): (appID, sessionID, nil, nil, nil)
            case .user(let userID, let appID): (appID, nil, userID, nil, nil)
            case .userExcept(let userID, let kept, let appID): (appID, nil, userID, nil, kept)
            case .signIns(let userID, let credentialType, let appID): (appID, nil, userID, credentialType, nil)
            case .app(let appID): (appID, nil, nil, nil, nil)
            }
        let logger = logger
        return try await AuditedTransaction(client: client, logger: logger).run(
            { connection in
                let rows = try await connection.tracedQuery(
                    """
                    WITH ended AS (
                        UPDATE sessions SET revoked_at = now(), revoked_reason = \(reason)
                        WHERE app_id = \(appID.uuid) AND (\(sessionID)::uuid IS NULL OR session_id = \(sessionID))
                          AND (\(userID)::text IS NULL OR user_id = \(userID))
                          AND (\(credentialType)::text IS NULL OR credential_type = \(credentialType))
                          AND (\(kept)::uuid IS NULL OR session_id <> \(kept))
                          AND revoked_at IS NULL AND expires_at > now() AND idle_expires_at > now()
                        RETURNING 1
                    )
                    SELECT count(*)::int FROM ended
                    """, logger: logger)
                return try rows.decode(Int.self).first ?? 0
            },
            recording: { count in
                // One session named and none ended is a 404: nothing happened to record.
                if case .session = scope, count == 0 { return nil }
                var event = row
                event.detail["revoked"] = "\(count)"
                event.detail["reason"] = reason
                return event
            })
    }

    /// The session in `row`'s columns after the first `skipped`.
    static func session(_ row: PostgresRow, skipping skipped: Int) throws -> StoredSession {
        let columns = row.makeRandomAccess()
        func column<Value: PostgresDecodable>(_ index: Int, _ type: Value.Type) throws -> Value {
            try columns[skipped + index].decode(Value.self)
        }
        let generation = try column(12, Int64.self)
        guard let unsigned = UInt32(exactly: generation) else { throw UnreadableRow("a session's generation is \(generation)") }
        return StoredSession(
            appID: AppID(uuid: try column(0, UUID.self)), sessionID: try column(1, UUID.self), userID: try column(2, String.self),
            profile: try ProfileJSON.profile(try column(3, String.self)), credentialType: try column(4, String.self),
            methods: try column(5, [String].self), authTime: try column(6, Date.self), deviceLabel: try column(7, String?.self),
            createdAt: try column(8, Date.self), lastUsedAt: try column(9, Date.self), idleExpiresAt: try column(10, Date.self),
            expiresAt: try column(11, Date.self), generation: unsigned,
            tokenDigest: Array(try column(13, ByteBuffer.self).readableBytesView),
            previousDigest: try column(14, ByteBuffer?.self).map { Array($0.readableBytesView) },
            rotatedAt: try column(15, Date?.self), revokedAt: try column(16, Date?.self), revokedReason: try column(17, String?.self))
    }
}
