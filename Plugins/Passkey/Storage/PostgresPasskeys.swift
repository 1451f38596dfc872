import Foundation
import GatewayCore
import GatewayPostgres
import Logging
import PostgresNIO

/// The passkey tables in PostgreSQL (`passkey_challenges`, `passkeys`).
/// A challenge is spent by the one statement that finds it, and an
/// assertion's counter is stored only over the counter it was checked
/// against, so two replicas given the same response take it once.
struct PostgresPasskeys: PasskeyStore {
    let client: PostgresClient
    let logger: Logger
    let timeout: Duration

    private var transactions: AuditedTransaction { AuditedTransaction(client: client, logger: logger) }

    func keepChallenge(
        _ digest: [UInt8], for ceremony: PasskeyCeremony, userID: String?, in appID: AppID, lifetimeSeconds: Int
    ) async throws {
        let (client, logger) = (client, logger)
        try await withDatabaseTimeout(timeout) {
            // A lone statement, not a transaction of its own (two round trips fewer): a challenge lost to a
            // failover after its statement answered fails its sign-in as passkey_challenge, and the client
            // asks for another. Nothing passes that should not.
            try await client.tracedQuery(
                """
                WITH expired AS (
                    DELETE FROM passkey_challenges WHERE ctid IN (
                        SELECT ctid FROM passkey_challenges
                        WHERE app_id = \(appID.uuid) AND expires_at < now() LIMIT 100)
                )
                INSERT INTO passkey_challenges (app_id, challenge_sha256, ceremony, user_id, expires_at)
                VALUES (\(appID.uuid), \(ByteBuffer(bytes: digest)), \(ceremony.rawValue), \(userID),
                        now() + make_interval(secs => \(lifetimeSeconds)))
                """, logger: logger)
        }
    }

    func spendChallenge(_ digest: [UInt8], for ceremony: PasskeyCeremony, in appID: AppID) async throws -> (
        spent: Bool, userID: String?
    ) {
        let (client, logger) = (client, logger)
        return try await withDatabaseTimeout(timeout) {
            // Committed before the answer: a challenge spent is spent for good.
            let rows = try await client.committedQuery(
                """
                DELETE FROM passkey_challenges
                WHERE app_id = \(appID.uuid) AND challenge_sha256 = \(ByteBuffer(bytes: digest))
                  AND ceremony = \(ceremony.rawValue)
                RETURNING expires_at > now(), user_id
                """, logger: logger)
            guard let (live, userID) = try rows.first?.decode((Bool, String?).self) else { return (false, nil) }
            return (live, live ? userID : nil)
        }
    }

    private static let columns = """
        credential_id, user_id, name, public_key, algorithm, sign_count, backup_eligible, backed_up, aaguid,
        attestation_format, created_at, last_used_at
        """

    private static func passkeys(_ rows: PostgresRowSequence) async throws -> [StoredPasskey] {
        var found: [StoredPasskey] = []
        for try await row in rows {
            let (id, user, name, key, algorithm, count, eligible, backedUp, aaguid, format, created, used) = try row.decode(
                (ByteBuffer, String, String, ByteBuffer, Int32, Int64, Bool, Bool, UUID, String, Date, Date?).self)
            found.append(
                StoredPasskey(
                    credentialID: Array(id.readableBytesView), userID: user, name: name,
                    publicKey: Array(key.readableBytesView), algorithm: Int(algorithm), signCount: UInt32(clamping: count),
                    backupEligible: eligible, backedUp: backedUp, aaguid: aaguid, attestationFormat: format,
                    createdAt: created, lastUsedAt: used))
        }
        return found
    }

    func passkey(_ credentialID: [UInt8], in appID: AppID) async throws -> StoredPasskey? {
        let (client, logger) = (client, logger)
        return try await withDatabaseTimeout(timeout) {
            let rows = try await client.tracedQuery(
                """
                SELECT \(unescaped: Self.columns) FROM passkeys
                WHERE app_id = \(appID.uuid) AND credential_id = \(ByteBuffer(bytes: credentialID))
                """, logger: logger)
            return try await Self.passkeys(rows).first
        }
    }

    func passkeys(of userID: String, in appID: AppID) async throws -> [StoredPasskey] {
        let (client, logger) = (client, logger)
        return try await withDatabaseTimeout(timeout) {
            let rows = try await client.tracedQuery(
                """
                SELECT \(unescaped: Self.columns) FROM passkeys
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) ORDER BY created_at, credential_id
                """, logger: logger)
            return try await Self.passkeys(rows)
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
            for try await count in counted.decode(Int64.self) where count >= maximum { return PasskeyAddition.tooMany }
            let rows = try await connection.tracedQuery(
                """
                INSERT INTO passkeys (app_id, credential_id, user_id, name, public_key, algorithm, sign_count,
                                      backup_eligible, backed_up, aaguid, attestation_format)
                VALUES (\(appID.uuid), \(ByteBuffer(bytes: passkey.credentialID)), \(passkey.userID), \(passkey.name),
                        \(ByteBuffer(bytes: passkey.publicKey)), \(Int32(passkey.algorithm)), \(Int64(passkey.signCount)),
                        \(passkey.backupEligible), \(passkey.backedUp), \(passkey.aaguid), \(passkey.attestationFormat))
                ON CONFLICT (app_id, credential_id) DO NOTHING
                RETURNING 1
                """, logger: logger)
            for try await _ in rows { return .added }
            return .duplicate
        }
    }

    func recordUse(
        of credentialID: [UInt8], in appID: AppID, previous: UInt32, asserted: AssertedCredential
    ) async throws -> Bool {
        let (client, logger) = (client, logger)
        return try await withDatabaseTimeout(timeout) {
            let rows = try await client.committedQuery(
                """
                UPDATE passkeys SET sign_count = \(Int64(asserted.signCount)), backup_eligible = \(asserted.backupEligible),
                                    backed_up = \(asserted.backedUp), last_used_at = now()
                WHERE app_id = \(appID.uuid) AND credential_id = \(ByteBuffer(bytes: credentialID))
                  AND sign_count = \(Int64(previous))
                RETURNING 1
                """, logger: logger)
            return !rows.isEmpty
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
            for try await _ in rows { return true }
            return false
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
            for try await _ in rows { return true }
            return false
        }
    }
}
