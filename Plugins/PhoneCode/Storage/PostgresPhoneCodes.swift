import Foundation
import GatewayCore
import GatewayCourier
import GatewayPostgres
import Logging
import NIOCore
import PostgresNIO

/// The `phone_numbers` table in PostgreSQL, and the `phone_codes` table
/// through the courier (``PostgresCodeStore``). Each admin write runs in one
/// transaction with its audit row.
struct PostgresPhoneCodes: PhoneCodeStore {
    let client: PostgresClient
    let logger: Logger

    private var codes: PostgresCodeStore<PhoneCodeTable> { PostgresCodeStore(client: client, logger: logger) }

    func storeUnlessTooSoon(
        code mac: [UInt8], for number: PhoneNumber, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int, queueing message: OutboxMessage?
    ) async throws -> Int? {
        try await codes.storeUnlessTooSoon(
            code: mac, for: number, in: appID, attempts: attempts, lifetimeSeconds: lifetimeSeconds,
            resendAfterSeconds: resendAfterSeconds, queueing: message)
    }

    @discardableResult
    func discardCode(for number: PhoneNumber, in appID: AppID) async throws -> Bool {
        try await codes.discardCode(for: number, in: appID)
    }

    func check(_ mac: [UInt8], for number: PhoneNumber, in appID: AppID, keepingOnMatch: Bool) async throws -> CodeCheck {
        try await codes.check(mac, for: number, in: appID, keepingOnMatch: keepingOnMatch)
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
