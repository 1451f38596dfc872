import Foundation
import GatewayCore
import GatewayPostgres
import Logging
import PostgresNIO

/// The passkey tables in PostgreSQL (`passkey_challenges`, `passkeys`).
/// A challenge is spent by the one statement that finds it, and an
/// assertion's counter is stored only over the counter it was checked
/// against, so two replicas given the same response take it once.
/// Reads are tried again while the database fails over; writes, whose
/// first attempt's fate may be unknown, are made once.
struct PostgresPasskeys: PasskeyStore {
    let client: PostgresClient
    let logger: Logger
    let retry: DatabaseRetry

    private var timeout: Duration { retry.attemptTimeout }

    private var transactions: AuditedTransaction { AuditedTransaction(client: client, logger: logger) }

    func keepChallenge(
        _ digest: [UInt8], for ceremony: PasskeyCeremony, userID: String?, in appID: AppID, lifetimeSeconds: Int
    ) async throws {
        let (client, logger) = (client, logger)
        let statement = KeepChallenge(
            appID: appID, digest: digest, ceremony: ceremony.rawValue, userID: userID, lifetimeSeconds: lifetimeSeconds)
        try await withDatabaseTimeout(timeout) {
            // A lone statement, not a transaction of its own (two round trips fewer): a challenge lost to a
            // failover after its statement answered fails its sign-in as passkey_challenge, and the client
            // asks for another. Nothing passes that should not.
            _ = try await client.tracedExecute(statement, logger: logger)
        }
    }

    func spendChallenge(_ digest: [UInt8], for ceremony: PasskeyCeremony, in appID: AppID) async throws -> (
        spent: Bool, userID: String?
    ) {
        let (client, logger) = (client, logger)
        let statement = SpendChallenge(appID: appID, digest: digest, ceremony: ceremony.rawValue)
        return try await withDatabaseTimeout(timeout) {
            // Committed before the answer: a challenge spent is spent for good.
            guard let (live, userID) = try await client.committedExecute(statement, logger: logger).first else {
                return (false, nil)
            }
            return (live, live ? userID : nil)
        }
    }

    // The token path's statements, prepared once a connection (planning them was a third of their cost).

    private struct KeepChallenge: PostgresPreparedStatement {
        static let name = "passkey_challenge_keep"
        static let sql = """
            WITH expired AS (
                DELETE FROM passkey_challenges WHERE ctid IN (
                    SELECT ctid FROM passkey_challenges WHERE app_id = $1 AND expires_at < now() LIMIT 100)
            )
            INSERT INTO passkey_challenges (app_id, challenge_sha256, ceremony, user_id, expires_at)
            VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
            """
        typealias Row = Void
        let appID: AppID
        let digest: [UInt8]
        let ceremony: String
        let userID: String?
        let lifetimeSeconds: Int

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 5)
            bindings.append(appID.uuid)
            bindings.append(ByteBuffer(bytes: digest))
            bindings.append(ceremony)
            bindings.append(userID)
            bindings.append(Double(lifetimeSeconds))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    private struct SpendChallenge: PostgresPreparedStatement {
        static let name = "passkey_challenge_spend"
        static let sql = """
            DELETE FROM passkey_challenges WHERE app_id = $1 AND challenge_sha256 = $2 AND ceremony = $3
            RETURNING expires_at > now(), user_id
            """
        typealias Row = (Bool, String?)
        let appID: AppID
        let digest: [UInt8]
        let ceremony: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(appID.uuid)
            bindings.append(ByteBuffer(bytes: digest))
            bindings.append(ceremony)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> (Bool, String?) { try row.decode((Bool, String?).self) }
    }

    private struct FindPasskey: PostgresPreparedStatement {
        static let name = "passkey_find"
        static let sql = "SELECT \(PostgresPasskeys.columns) FROM passkeys WHERE app_id = $1 AND credential_id = $2"
        typealias Row = StoredPasskey
        let appID: AppID
        let credentialID: [UInt8]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(appID.uuid)
            bindings.append(ByteBuffer(bytes: credentialID))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> StoredPasskey { try PostgresPasskeys.passkey(row) }
    }

    private struct RecordUse: PostgresPreparedStatement {
        static let name = "passkey_record_use"
        static let sql = """
            UPDATE passkeys SET sign_count = $3, backup_eligible = $4, backed_up = $5, last_used_at = now()
            WHERE app_id = $1 AND credential_id = $2 AND sign_count = $6
            RETURNING 1
            """
        typealias Row = Int32
        let appID: AppID
        let credentialID: [UInt8]
        let previous: UInt32
        let asserted: AssertedCredential

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(appID.uuid)
            bindings.append(ByteBuffer(bytes: credentialID))
            bindings.append(Int64(asserted.signCount))
            bindings.append(asserted.backupEligible)
            bindings.append(asserted.backedUp)
            bindings.append(Int64(previous))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
    }

    private static let columns = """
        credential_id, user_id, name, public_key, algorithm, sign_count, backup_eligible, backed_up, aaguid,
        attestation_format, created_at, last_used_at, one_factor_session_id
        """

    private static func passkey(_ row: PostgresRow) throws -> StoredPasskey {
        let (id, user, name, key, algorithm, count, eligible, backedUp, aaguid, format, created, used, session) = try row.decode(
            (ByteBuffer, String, String, ByteBuffer, Int32, Int64, Bool, Bool, UUID, String, Date, Date?, UUID?).self)
        return StoredPasskey(
            credentialID: Array(id.readableBytesView), userID: user, name: name, publicKey: Array(key.readableBytesView),
            algorithm: Int(algorithm), signCount: UInt32(clamping: count), backupEligible: eligible, backedUp: backedUp,
            aaguid: aaguid, attestationFormat: format, createdAt: created, lastUsedAt: used, oneFactorSessionID: session)
    }

    func passkey(_ credentialID: [UInt8], in appID: AppID) async throws -> StoredPasskey? {
        let (client, logger) = (client, logger)
        let statement = FindPasskey(appID: appID, credentialID: credentialID)
        return try await retry.run { try await client.tracedExecute(statement, logger: logger).first }
    }

    func passkeys(of userID: String, in appID: AppID) async throws -> [StoredPasskey] {
        let (client, logger) = (client, logger)
        return try await retry.run {
            let rows = try await client.tracedQuery(
                """
                SELECT \(unescaped: Self.columns) FROM passkeys
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) ORDER BY created_at, credential_id
                """, logger: logger)
            var found: [StoredPasskey] = []
            for row in rows { found.append(try Self.passkey(row)) }
            return found
        }
    }

    func add(_ passkey: StoredPasskey, in appID: AppID, recording event: AuditEvent) async throws -> PasskeyAddition {
        let logger = logger
        let maximum = PasskeyStoreLimits.maximumPerUser
        return try await transactions.run(recording: event, when: { $0 == .added }) { connection in
            // One registration of a user at a time, so two at once cannot pass the count together.
            try await connection.tracedQuery(
                "SELECT pg_advisory_xact_lock(hashtextextended(\("passkeys:\(appID.uuid.lowercasedText):\(passkey.userID)"), 0))",
                logger: logger)
            let counted = try await connection.tracedQuery(
                "SELECT count(*)::int8 FROM passkeys WHERE app_id = \(appID.uuid) AND user_id = \(passkey.userID)",
                logger: logger)
            for count in try counted.decode(Int64.self) where count >= maximum { return PasskeyAddition.tooMany }
            let rows = try await connection.tracedQuery(
                """
                INSERT INTO passkeys (app_id, credential_id, user_id, name, public_key, algorithm, sign_count,
                                      backup_eligible, backed_up, aaguid, attestation_format, one_factor_session_id)
                VALUES (\(appID.uuid), \(ByteBuffer(bytes: passkey.credentialID)), \(passkey.userID), \(passkey.name),
                        \(ByteBuffer(bytes: passkey.publicKey)), \(Int32(passkey.algorithm)), \(Int64(passkey.signCount)),
                        \(passkey.backupEligible), \(passkey.backedUp), \(passkey.aaguid), \(passkey.attestationFormat),
                        \(passkey.oneFactorSessionID))
                ON CONFLICT (app_id, credential_id) DO NOTHING
                RETURNING 1
                """, logger: logger)
            for _ in rows { return .added }
            return .duplicate
        }
    }

    func recordUse(
        of credentialID: [UInt8], in appID: AppID, previous: UInt32, asserted: AssertedCredential
    ) async throws -> Bool {
        let (client, logger) = (client, logger)
        let statement = RecordUse(appID: appID, credentialID: credentialID, previous: previous, asserted: asserted)
        return try await withDatabaseTimeout(timeout) {
            try await !client.committedExecute(statement, logger: logger).isEmpty
        }
    }

    func rename(_ credentialID: [UInt8], of userID: String, in appID: AppID, to name: String, recording event: AuditEvent)
        async throws -> Bool
    {
        let logger = logger
        return try await transactions.run(recording: event, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                UPDATE passkeys SET name = \(name)
                WHERE app_id = \(appID.uuid) AND credential_id = \(ByteBuffer(bytes: credentialID)) AND user_id = \(userID)
                RETURNING 1
                """, logger: logger)
            return !rows.isEmpty
        }
    }

    func revoke(_ credentialID: [UInt8], of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        let logger = logger
        return try await transactions.run(recording: event, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                DELETE FROM passkeys
                WHERE app_id = \(appID.uuid) AND credential_id = \(ByteBuffer(bytes: credentialID)) AND user_id = \(userID)
                RETURNING 1
                """, logger: logger)
            return !rows.isEmpty
        }
    }
}
