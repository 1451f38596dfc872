import Foundation
import GatewayCore
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
        "user_id, password_hash, \(ProfileColumns.names), disabled, created_at, updated_at, last_login_at"

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
        _ userID: String, in appID: AppID, recording event: AuditEvent,
        _ change: @escaping @Sendable (PasswordUser) -> PasswordUserRecord
    ) async throws -> Bool {
        try await transactions.run(recording: event, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                SELECT \(unescaped: Self.columns) FROM password_users
                WHERE app_id = \(appID.uuid) AND user_id = \(userID) FOR UPDATE
                """, logger: logger)
            var found: PasswordUser?
            for row in rows { found = try Self.user(row) }
            guard let found else { return false }
            _ = try await upsert([change(found)], in: appID, on: connection)
            return true
        }
    }

    func list(in appID: AppID, prefix: String, after: String?, limit: Int) async throws -> [PasswordUser] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.columns) FROM password_users
            WHERE app_id = \(appID.uuid) AND user_id >= \(prefix) AND starts_with(user_id, \(prefix))
              AND user_id > \(after ?? "")
            ORDER BY user_id LIMIT \(limit)
            """, logger: logger)
        var users: [PasswordUser] = []
        for row in rows { users.append(try Self.user(row)) }
        return users
    }

    func upsert(
        _ records: [PasswordUserRecord], in appID: AppID,
        recording describe: @escaping @Sendable ([PasswordUpsert]) -> AuditEvent
    ) async throws -> [PasswordUpsert] {
        try await transactions.run({ connection in try await upsert(records, in: appID, on: connection) }, recording: describe)
    }

    /// `$1` the app, `$2` ids, `$3` hashes, then one array per profile field, and the `disabled` flags last.
    private static let upsertSQL = """
        INSERT INTO password_users AS u (app_id, user_id, password_hash, \(ProfileColumns.names), disabled)
        SELECT $1, user_id, password_hash, \(ProfileColumns.nullIfEmpty), disabled
        FROM unnest($2::text[], $3::text[], \(ProfileColumns.arrayParameters(from: 4)),
                    $\(4 + ProfileField.allCases.count)::boolean[])
             AS r(user_id, password_hash, \(ProfileColumns.names), disabled)
        ON CONFLICT (app_id, user_id) DO UPDATE SET
            password_hash = excluded.password_hash, \(ProfileColumns.fromExcluded),
            disabled = excluded.disabled, updated_at = now()
        """

    private func upsert(
        _ records: [PasswordUserRecord], in appID: AppID, on connection: PostgresConnection
    ) async throws -> [PasswordUpsert] {
        // The users it replaces, as they are, locked until the transaction ends: what the change is measured
        // against (PasswordUpsert). (One statement cannot do both: a row the upsert changes is one its own
        // FOR UPDATE no longer returns.)
        let userIDs = records.map(\.userID)
        let existing = try await connection.tracedQuery(
            """
            SELECT user_id, password_hash, disabled FROM password_users
            WHERE app_id = \(appID.uuid) AND user_id = ANY(\(userIDs)) FOR UPDATE
            """, logger: logger)
        var old: [String: (hash: String, disabled: Bool)] = [:]
        for (userID, hash, disabled) in try existing.decode((String, String, Bool).self) { old[userID] = (hash, disabled) }
        var bindings = PostgresBindings()
        bindings.append(appID.uuid)
        bindings.append(userIDs)
        bindings.append(records.map(\.hash.text))
        ProfileColumns.bindArrays(records.map(\.profile), to: &bindings)
        bindings.append(records.map(\.disabled))
        try await connection.tracedQuery(PostgresQuery(unsafeSQL: Self.upsertSQL, binds: bindings), logger: logger)
        return records.map { record in
            guard let replaced = old[record.userID] else { return .created }
            return PasswordUpsert.replacing(disabled: replaced.disabled, hash: replaced.hash, by: record)
        }
    }

    func insertIfAbsent(_ record: PasswordUserRecord, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await transactions.run(recording: event, when: { $0 }) { connection in
            try await insertIfAbsent(record, in: appID, on: connection)
        }
    }

    private static let insertSQL = """
        INSERT INTO password_users (app_id, user_id, password_hash, \(ProfileColumns.names))
        VALUES ($1, $2, $3, \(ProfileColumns.parameters(from: 4)))
        ON CONFLICT (app_id, user_id) DO NOTHING RETURNING 1
        """

    private func insertIfAbsent(_ record: PasswordUserRecord, in appID: AppID, on connection: PostgresConnection) async throws -> Bool {
        var bindings = PostgresBindings()
        bindings.append(appID.uuid)
        bindings.append(record.userID)
        bindings.append(record.hash.text)
        ProfileColumns.bind(record.profile, to: &bindings)
        let rows = try await connection.tracedQuery(PostgresQuery(unsafeSQL: Self.insertSQL, binds: bindings), logger: logger)
        return !rows.isEmpty
    }

    func delete(_ userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await transactions.run(recording: event, when: { $0 }) { connection in
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
        return PasswordUser(
            userID: userID, hash: hash, profile: try ProfileColumns.profile(of: row),
            disabled: try columns["disabled"].decode(Bool.self), createdAt: try columns["created_at"].decode(Date.self),
            updatedAt: try columns["updated_at"].decode(Date.self), lastLoginAt: try columns["last_login_at"].decode(Date?.self))
    }
}

/// A stored hash the gateway cannot read: someone wrote the table by hand.
struct UnreadablePasswordHash: Error, CustomStringConvertible {
    let userID: String
    var description: String { "the stored password hash of user '\(userID)' is not one the gateway verifies" }
}
