import Foundation
import GatewayCore
import GatewayPostgres
import Logging
import NIOCore
import PostgresNIO

/// The `phone_codes` and `phone_numbers` tables in PostgreSQL. Each admin
/// write runs in one transaction with its audit row.
struct PostgresPhoneCodes: PhoneCodeStore {
    let client: PostgresClient
    let logger: Logger

    /// One statement, so two concurrent requests for one number cannot both
    /// send: the second waits for the first's row and then sees it. Prepared:
    /// every code request runs it.
    func storeUnlessTooSoon(
        code mac: [UInt8], for number: PhoneNumber, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int
    ) async throws -> Int? {
        let statement = StoreCode(
            appID: appID, number: number.text, mac: mac, attempts: attempts, lifetimeSeconds: lifetimeSeconds,
            resendAfterSeconds: resendAfterSeconds)
        // Committed before the code is sent: a code whose row a failover undid would be a text the user cannot use.
        for (stored, wait) in try await client.committedExecute(statement, logger: logger) {
            return stored == 1 ? nil : Int(wait ?? 1)
        }
        return nil
    }

    private struct StoreCode: PostgresPreparedStatement {
        static let name = "phone_code_store"
        static let sql = """
            WITH stored AS (
                INSERT INTO phone_codes AS c (app_id, phone_number, code_hmac, attempts_left, sent_at, expires_at)
                VALUES ($1, $2, $3, $4, now(), now() + make_interval(secs => $5))
                ON CONFLICT (app_id, phone_number) DO UPDATE SET code_hmac = excluded.code_hmac,
                    attempts_left = excluded.attempts_left, sent_at = excluded.sent_at, expires_at = excluded.expires_at
                WHERE c.expires_at <= now() OR c.sent_at <= now() - make_interval(secs => $6)
                RETURNING 1
            )
            SELECT (SELECT count(*) FROM stored)::int8,
                   (SELECT greatest(1, ceil(extract(epoch FROM
                        c.sent_at + make_interval(secs => $6) - clock_timestamp())))::int8
                    FROM phone_codes c WHERE c.app_id = $1 AND c.phone_number = $2)
            """
        let appID: AppID
        let number: String
        let mac: [UInt8]
        let attempts: Int
        let lifetimeSeconds: Int
        let resendAfterSeconds: Int

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(appID.uuid)
            bindings.append(number)
            bindings.append(ByteBuffer(bytes: mac))
            bindings.append(Int32(attempts))
            bindings.append(Int32(lifetimeSeconds))
            bindings.append(Int32(resendAfterSeconds))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> (Int64, Int64?) { try row.decode((Int64, Int64?).self) }
    }

    func discardCode(for number: PhoneNumber, in appID: AppID) async throws {
        try await client.committedQuery(
            "DELETE FROM phone_codes WHERE app_id = \(appID.uuid) AND phone_number = \(number.text)", logger: logger)
    }

    /// Under a row lock, so concurrent checks of one code wait for each other.
    func check(_ mac: [UInt8], for number: PhoneNumber, in appID: AppID) async throws -> PhoneCodeCheck {
        try await client.transaction(logger: logger) { connection in
            let rows = try await connection.tracedQuery(
                """
                SELECT code_hmac, attempts_left, expires_at > now() FROM phone_codes
                WHERE app_id = \(appID.uuid) AND phone_number = \(number.text) FOR UPDATE
                """, logger: logger)
            var found: (stored: [UInt8], attemptsLeft: Int, live: Bool)?
            for (stored, left, live) in try rows.decode((ByteBuffer, Int, Bool).self) {
                found = (Array(buffer: stored), left, live)
            }
            guard let found else { return .noCode }
            guard found.live, found.attemptsLeft > 0 else {
                try await delete(number, in: appID, on: connection)
                return .noCode
            }
            if ConstantTime.equals(found.stored, mac) {
                try await delete(number, in: appID, on: connection)
                return .accepted
            }
            let left = found.attemptsLeft - 1
            if left == 0 {
                try await delete(number, in: appID, on: connection)
            } else {
                try await connection.tracedQuery(
                    """
                    UPDATE phone_codes SET attempts_left = \(left)
                    WHERE app_id = \(appID.uuid) AND phone_number = \(number.text)
                    """, logger: logger)
            }
            return .wrong(attemptsLeft: left)
        }
    }

    private func delete(_ number: PhoneNumber, in appID: AppID, on connection: PostgresConnection) async throws {
        try await connection.tracedQuery(
            "DELETE FROM phone_codes WHERE app_id = \(appID.uuid) AND phone_number = \(number.text)", logger: logger)
    }

    // MARK: The directory

    fileprivate static let bindingColumns = "phone_number, user_id, \(ProfileColumns.names), created_at, updated_at"

    /// Prepared: a code request and a sign-in each ask.
    func binding(of number: PhoneNumber, in appID: AppID) async throws -> PhoneNumberBinding? {
        return try await client.tracedExecute(FindBinding(appID: appID, number: number.text), logger: logger).first
    }

    private struct FindBinding: PostgresPreparedStatement {
        static let name = "phone_number_binding_find"
        static let sql = "SELECT \(PostgresPhoneCodes.bindingColumns) FROM phone_numbers WHERE app_id = $1 AND phone_number = $2"
        let appID: AppID
        let number: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(appID.uuid)
            bindings.append(number)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PhoneNumberBinding { try PostgresPhoneCodes.binding(row) }
    }

    func bindings(in appID: AppID, after: String?, limit: Int) async throws -> [PhoneNumberBinding] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.bindingColumns) FROM phone_numbers
            WHERE app_id = \(appID.uuid) AND phone_number > \(after ?? "")
            ORDER BY phone_number LIMIT \(limit)
            """, logger: logger)
        var bindings: [PhoneNumberBinding] = []
        for row in rows { bindings.append(try Self.binding(row)) }
        return bindings
    }

    func bind(
        _ number: PhoneNumber, to identity: VerifiedIdentity, in appID: AppID,
        recording describe: @escaping @Sendable (Bool) -> AuditEvent
    ) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run({ connection in
            try await bind(number, to: identity, in: appID, on: connection)
        }, recording: describe)
    }

    private static let bindSQL = """
        INSERT INTO phone_numbers AS p (app_id, phone_number, user_id, \(ProfileColumns.names))
        VALUES ($1, $2, $3, \(ProfileColumns.parameters(from: 4)))
        ON CONFLICT (app_id, phone_number) DO UPDATE SET user_id = excluded.user_id, \(ProfileColumns.fromExcluded),
            updated_at = now()
        RETURNING (xmax = 0)
        """

    private func bind(_ number: PhoneNumber, to identity: VerifiedIdentity, in appID: AppID, on connection: PostgresConnection)
        async throws -> Bool
    {
        var bindings = PostgresBindings()
        bindings.append(appID.uuid)
        bindings.append(number.text)
        bindings.append(identity.userID)
        ProfileColumns.bind(identity.profile, to: &bindings)
        let rows = try await connection.tracedQuery(PostgresQuery(unsafeSQL: Self.bindSQL, binds: bindings), logger: logger)
        for created in try rows.decode(Bool.self) { return created }
        return false
    }

    func bindings(of userID: String, in appID: AppID) async throws -> [PhoneNumberBinding] {
        let rows = try await client.tracedQuery(
            """
            SELECT \(unescaped: Self.bindingColumns) FROM phone_numbers
            WHERE app_id = \(appID.uuid) AND user_id = \(userID)
            ORDER BY phone_number
            """, logger: logger)
        return try rows.map(Self.binding)
    }

    func unbind(_ number: PhoneNumber, in appID: AppID, boundTo userID: String?, recording event: AuditEvent) async throws -> Bool {
        try await AuditedTransaction(client: client, logger: logger).run(recording: event, when: { $0 }) { connection in
            let rows = try await connection.tracedQuery(
                """
                DELETE FROM phone_numbers
                WHERE app_id = \(appID.uuid) AND phone_number = \(number.text)
                  AND (\(userID)::text IS NULL OR user_id = \(userID))
                RETURNING 1
                """, logger: logger)
            return !rows.isEmpty
        }
    }

    fileprivate static func binding(_ row: PostgresRow) throws -> PhoneNumberBinding {
        let columns = row.makeRandomAccess()
        return PhoneNumberBinding(
            phoneNumber: try columns["phone_number"].decode(String.self),
            identity: VerifiedIdentity(
                userID: try columns["user_id"].decode(String.self), profile: try ProfileColumns.profile(of: row)),
            createdAt: try columns["created_at"].decode(Date.self), updatedAt: try columns["updated_at"].decode(Date.self))
    }
}
