import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayPostgres
import Logging
import PostgresNIO

/// The `password_users` table in PostgreSQL. Each write runs in one
/// transaction with its audit row.
struct PostgresPasswordUsers: PasswordUserStore {
    let client: PostgresClient
    let logger: Logger

    private var transactions: AuditedTransaction { AuditedTransaction(client: client, logger: logger) }

    private static let columns =
        "user_id, password_hash, \(ProfileColumns.names), email_verified, disabled, created_at, updated_at, last_login_at"

    /// A prepared statement, planned once per connection: every login asks.
    func find(_ userID: String, in appID: AppID) async throws -> PasswordUser? {
        return try await client.tracedExecute(FindUser(appID: appID, userID: userID), logger: logger).first
    }

    private struct FindUser: PostgresPreparedStatement {
        static let name = "password_user_find"
        static let sql = "SELECT \(PostgresPasswordUsers.columns) FROM password_users WHERE app_id = $1 AND user_id = $2"
        let appID: AppID
        let userID: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(appID.uuid)
            bindings.append(userID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PasswordUser { try PostgresPasswordUsers.user(row) }
    }

    /// Prepared, on `password_users_by_email`: an email-code request asks.
    func find(email: String, in appID: AppID) async throws -> [PasswordUser] {
        try await client.tracedExecute(FindUserByEmail(appID: appID, email: email.lowercased()), logger: logger)
    }

    private struct FindUserByEmail: PostgresPreparedStatement {
        static let name = "password_user_find_by_email"
        static let sql = "SELECT \(PostgresPasswordUsers.columns) FROM password_users WHERE app_id = $1 AND lower(email) = $2 LIMIT 2"
        let appID: AppID
        let email: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(appID.uuid)
            bindings.append(email)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PasswordUser { try PostgresPasswordUsers.user(row) }
    }

    /// The import lock is a PostgreSQL session lock, so one import per app
    /// runs at a time over every replica, and a replica that dies mid-import
    /// frees it with its connection.
    func whileImporting<Result: Sendable>(
        into appID: AppID, _ body: () async throws -> Result
    ) async throws -> Result? {
        let key = "password-import:\(appID.uuid.lowercasedText)"
        return try await client.withConnection { connection -> Result? in
            let rows = try await connection.tracedQuery("SELECT pg_try_advisory_lock(hashtextextended(\(key), 0))", logger: logger)
            var locked = false
            for taken in try rows.decode(Bool.self) { locked = taken }
            guard locked else { return nil }
            let result: Result
            do {
                result = try await body()
            } catch {
                await unlock(key, on: connection)
                throw error
            }
            await unlock(key, on: connection)
            return result
        }
    }

    private func unlock(_ key: String, on connection: PostgresConnection) async {
        do {
            _ = try await connection.tracedQuery("SELECT pg_advisory_unlock(hashtextextended(\(key), 0))", logger: logger)
        } catch {
            // The lock lives as long as the session: a connection that cannot be told closes, and frees it.
            logger.warning("user import lock not released", metadata: ["error": "\(error)"])
            try? await connection.close()
        }
    }

    func update(
        _ userID: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange],
        _ change: @escaping @Sendable (PasswordUser) -> PasswordUserRecord
    ) async throws -> Bool {
        try await transactions.run(recording: event, journaling: userChanges, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                SELECT \(unescaped: Self.columns) FROM password_users
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) FOR UPDATE
                """, logger: logger)
            var found: PasswordUser?
            for row in rows { found = try Self.user(row) }
            guard let found else { return false }
            guard try await write([change(found)], in: appID, on: connection).taken.isEmpty else {
                throw PasswordUpsert.addressTakenError
            }
            return true
        }
    }

    func list(in appID: AppID, prefix: String, emailVerified: Bool?, after: String?, limit: Int) async throws -> [PasswordUser] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.columns) FROM password_users
            WHERE app_id = \(appID.uuid) AND user_id >= \(prefix) AND starts_with(user_id, \(prefix))
              AND (\(emailVerified)::boolean IS NULL OR email_verified = \(emailVerified))
              AND user_id > \(after ?? "")
            ORDER BY user_id LIMIT \(limit)
            """, logger: logger)
        var users: [PasswordUser] = []
        for row in rows { users.append(try Self.user(row)) }
        return users
    }

    func upsert(
        _ records: [PasswordUserRecord], in appID: AppID, by origin: UserChangeOrigin,
        recording describe: @escaping @Sendable ([PasswordUpsert]) -> AuditEvent?
    ) async throws -> [PasswordUpsert] {
        try await transactions.run(
            { connection in
                let (old, taken) = try await write(records, in: appID, on: connection)
                return records.map { record in
                    if taken.contains(record.userID) { return .addressTaken }
                    guard let replaced = old[record.userID] else { return .created }
                    return PasswordUpsert.replacing(
                        disabled: replaced.disabled, hash: replaced.hash, by: record, in: appID, origin: origin)
                }
            }, recording: describe, journaling: { $0.flatMap(\.userChanges) })
    }

    /// `$1` the app, `$2` ids, `$3` hashes, then one array per profile field, and the `disabled` flags last.
    /// An address's verification is the record's where it says one, else
    /// the stored one while the address stays the same (any case).
    private static let upsertSQL = """
        INSERT INTO password_users AS u (app_id, user_id, password_hash, \(ProfileColumns.names), disabled, email_verified)
        SELECT $1, user_id, password_hash, \(ProfileColumns.nullIfEmpty), disabled, nullif(verified, '')::boolean
        FROM unnest($2::text[], $3::text[], \(ProfileColumns.arrayParameters(from: 4)),
                    $\(4 + ProfileField.allCases.count)::boolean[], $\(5 + ProfileField.allCases.count)::text[])
             AS r(user_id, password_hash, \(ProfileColumns.names), disabled, verified)
        ON CONFLICT (app_id, user_id) DO UPDATE SET
            password_hash = excluded.password_hash, \(ProfileColumns.fromExcluded),
            disabled = excluded.disabled, updated_at = now(),
            email_verified = CASE WHEN excluded.email IS NULL THEN NULL
                                  WHEN excluded.email_verified IS NOT NULL THEN excluded.email_verified
                                  WHEN lower(u.email) = lower(excluded.email) THEN u.email_verified END
        """

    /// Creates or replaces `records` but those whose address is taken
    /// (``AddressClaims``); the hash and `disabled` of each user it
    /// replaced, as they were, and the ids of those it did not write.
    private func write(
        _ records: [PasswordUserRecord], in appID: AppID, on connection: PostgresConnection
    ) async throws -> (old: [String: (hash: String, disabled: Bool)], taken: Set<String>) {
        // The users it replaces, as they are, locked until the transaction ends: what the change is measured
        // against (PasswordUpsert). (One statement cannot do both: a row the upsert changes is one its own
        // FOR UPDATE no longer returns.)
        let existing = try await connection.tracedQuery(
            """
            SELECT user_id, password_hash, disabled, lower(email) FROM password_users
            WHERE app_id = \(appID.uuid) AND user_id = ANY(\(records.map(\.userID))) FOR UPDATE
            """, logger: logger)
        var old: [String: (hash: String, disabled: Bool)] = [:]
        var stored: [String: String] = [:]
        for (userID, hash, disabled, email) in try existing.decode((String, String, Bool, String?).self) {
            old[userID] = (hash, disabled)
            stored[userID] = email
        }
        // An address new to its user: taken unless nobody else has it, decided under the lock sign-ups and
        // address changes of that address take, so two writes cannot both give it away.
        let claimed = AddressClaims.new(in: records, stored: stored)
        var holders: [String: Set<String>] = [:]
        if !claimed.isEmpty {
            for address in claimed { try await lockAddress(address, in: appID, on: connection) }
            let found = try await connection.tracedQuery(
                """
                SELECT user_id, lower(email) FROM password_users
                WHERE app_id = \(appID.uuid) AND lower(email) = ANY(\(claimed))
                """, logger: logger)
            for (userID, email) in try found.decode((String, String).self) { holders[email, default: []].insert(userID) }
        }
        let taken = AddressClaims.taken(records, stored: stored, holders: holders)
        let records = records.filter { !taken.contains($0.userID) }
        guard !records.isEmpty else { return (old, taken) }
        let userIDs = records.map(\.userID)
        var bindings = PostgresBindings()
        bindings.append(appID.uuid)
        bindings.append(userIDs)
        bindings.append(records.map(\.hash.text))
        ProfileColumns.bindArrays(records.map(\.profile), to: &bindings)
        bindings.append(records.map(\.disabled))
        bindings.append(records.map { record in record.profile.emailVerified.map { $0 ? "true" : "false" } ?? "" })
        try await connection.tracedQuery(PostgresQuery(unsafeSQL: Self.upsertSQL, binds: bindings), logger: logger)
        return (old, taken)
    }

    func insertIfAbsent(_ record: PasswordUserRecord, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await transactions.run(recording: event, when: { $0 }) { connection in
            try await insertIfAbsent(record, in: appID, on: connection)
        }
    }

    private static let insertSQL = """
        INSERT INTO password_users (app_id, user_id, password_hash, \(ProfileColumns.names), email_verified)
        VALUES ($1, $2, $3, \(ProfileColumns.parameters(from: 4)), $\(4 + ProfileField.allCases.count))
        ON CONFLICT (app_id, user_id) DO NOTHING RETURNING 1
        """

    private func insertIfAbsent(_ record: PasswordUserRecord, in appID: AppID, on connection: PostgresConnection) async throws -> Bool {
        var bindings = PostgresBindings()
        bindings.append(appID.uuid)
        bindings.append(record.userID)
        bindings.append(record.hash.text)
        ProfileColumns.bind(record.profile, to: &bindings)
        bindings.append(record.profile[.email] == nil ? nil : record.profile.emailVerified)
        let rows = try await connection.tracedQuery(PostgresQuery(unsafeSQL: Self.insertSQL, binds: bindings), logger: logger)
        return !rows.isEmpty
    }

    /// Sign-ups and address changes of one address in one app wait for each
    /// other on this transaction lock, on every replica.
    private func lockAddress(_ email: String, in appID: AppID, on connection: PostgresConnection) async throws {
        let key = "account-email:\(appID.uuid.lowercasedText):\(email.lowercased())"
        try await connection.tracedQuery("SELECT pg_advisory_xact_lock(hashtextextended(\(key), 0))", logger: logger)
    }

    func signUp(
        _ record: PasswordUserRecord, email: String, in appID: AppID,
        recording describe: @escaping @Sendable (AccountSignUp) -> AuditEvent
    ) async throws -> AccountSignUp {
        try await transactions.run({ connection in
            try await lockAddress(email, in: appID, on: connection)
            let rows = try await connection.tracedQuery(
                """
                SELECT \(unescaped: Self.columns) FROM password_users
                WHERE app_id = \(appID.uuid) AND (lower(email) = \(email.lowercased()) OR user_id = \(record.userID))
                ORDER BY lower(email) = \(email.lowercased()) DESC LIMIT 1
                """, logger: logger)
            for row in rows { return AccountSignUp.exists(try Self.user(row).account) }
            guard try await insertIfAbsent(record, in: appID, on: connection) else {
                throw SignUpRace()
            }
            return .created
        }, recording: describe)
    }

    func verifyEmail(_ email: String, of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await transactions.run(recording: event, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                UPDATE password_users SET email_verified = true, updated_at = now()
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) AND lower(email) = \(email.lowercased())
                RETURNING 1
                """, logger: logger)
            return !rows.isEmpty
        }
    }

    func changeEmail(
        of userID: String, to email: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange]
    ) async throws -> AccountEmailChange {
        try await transactions.run({ connection in
            try await lockAddress(email, in: appID, on: connection)
            let taken = try await connection.tracedQuery(
                """
                SELECT 1 FROM password_users
                WHERE app_id = \(appID.uuid) AND lower(email) = \(email.lowercased()) AND user_id <> \(userID)
                """, logger: logger)
            guard taken.isEmpty else { return AccountEmailChange.taken }
            let changed = try await connection.tracedQuery(
                """
                UPDATE password_users SET email = \(email), email_verified = true, updated_at = now()
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) RETURNING 1
                """, logger: logger)
            return changed.isEmpty ? .noUser : .changed
        }, recording: { $0 == .changed ? event : nil }, journaling: { $0 == .changed ? userChanges : [] })
    }

    func delete(_ userID: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange])
        async throws -> Bool
    {
        try await transactions.run(recording: event, journaling: userChanges, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                "DELETE FROM password_users WHERE app_id = \(appID.uuid) AND user_id = \(userID) RETURNING 1",
                logger: logger)
            return !rows.isEmpty
        }
    }

    func recordLogin(_ userID: String, in appID: AppID, replacing old: PasswordHash, with new: PasswordHash?) async throws {
        let statement = RecordLogin(appID: appID, userID: userID, oldHash: old.text, newHash: new?.text ?? old.text)
        try await client.tracedExecute(statement, logger: logger)
    }

    private struct RecordLogin: PostgresPreparedStatement {
        static let name = "password_user_record_login"
        static let sql = """
            UPDATE password_users SET last_login_at = now(),
                password_hash = CASE WHEN password_hash = $3 THEN $4 ELSE password_hash END
            WHERE app_id = $1 AND user_id = $2
            """
        let appID: AppID
        let userID: String
        let oldHash: String
        let newHash: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(appID.uuid)
            bindings.append(userID)
            bindings.append(oldHash)
            bindings.append(newHash)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    func recordLogins(_ times: [String: Date], in appID: AppID) async throws {
        // The statement orders its locks itself; the arrays need only pair each user with their time.
        let logins = Array(times)
        let statement = RecordLogins(appID: appID, userIDs: logins.map(\.key), times: logins.map(\.value))
        try await client.tracedExecute(statement, logger: logger)
    }

    /// The rows are locked in user-id order first, so two replicas writing
    /// overlapping users wait for each other instead of deadlocking.
    private struct RecordLogins: PostgresPreparedStatement {
        static let name = "password_user_record_logins"
        static let sql = """
            UPDATE password_users u SET last_login_at = greatest(u.last_login_at, l.at)
            FROM (
                SELECT p.user_id, n.at FROM unnest($2::text[], $3::timestamptz[]) AS n(user_id, at)
                JOIN password_users p ON p.app_id = $1 AND p.user_id = n.user_id
                ORDER BY p.user_id FOR UPDATE OF p
            ) AS l
            WHERE u.app_id = $1 AND u.user_id = l.user_id
            """
        let appID: AppID
        let userIDs: [String]
        let times: [Date]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(appID.uuid)
            bindings.append(userIDs)
            bindings.append(times)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    fileprivate static func user(_ row: PostgresRow) throws -> PasswordUser {
        let columns = row.makeRandomAccess()
        let userID = try columns["user_id"].decode(String.self)
        guard let hash = PasswordHash(try columns["password_hash"].decode(String.self)) else {
            throw UnreadablePasswordHash(userID: userID)
        }
        var profile = try ProfileColumns.profile(of: row)
        profile.emailVerified = try columns["email_verified"].decode(Bool?.self)
        return PasswordUser(
            userID: userID, hash: hash, profile: profile,
            disabled: try columns["disabled"].decode(Bool.self), createdAt: try columns["created_at"].decode(Date.self),
            updatedAt: try columns["updated_at"].decode(Date.self), lastLoginAt: try columns["last_login_at"].decode(Date?.self))
    }
}

/// A sign-up's new id found taken under the address lock: a user written
/// with that id but no lock (an admin's PUT of the same moment). The
/// request fails (500) rather than answer for a user it did not make.
struct SignUpRace: Error {}

/// A stored hash the gateway cannot read: someone wrote the table by hand.
struct UnreadablePasswordHash: Error, CustomStringConvertible {
    let userID: String
    var description: String { "the stored password hash of user '\(userID)' is not one the gateway verifies" }
}
