import Foundation
public import GatewayCore
import GatewayPostgres
public import Logging
import NIOCore
public import PostgresNIO

/// A channel's codes in PostgreSQL: the table ``CodeTable`` names, and the
/// outbox for a code whose message is queued with it.
public struct PostgresCodeStore<Table: CodeTable>: CodeStore {
    public typealias Address = Table.Address

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One statement, so two concurrent requests for one address cannot both
    /// send: the second waits for the first's row and then sees it; and the
    /// code and its queued message are one commit. Prepared: every code
    /// request runs it.
    public func storeUnlessTooSoon(
        code mac: [UInt8], for address: Address, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int, queueing message: OutboxMessage?
    ) async throws -> Int? {
        let statement = StoreCode<Table>(
            appID: appID, address: address.text, mac: mac, attempts: attempts, lifetimeSeconds: lifetimeSeconds,
            resendAfterSeconds: resendAfterSeconds, message: message)
        // Committed before the code is sent: a code whose row a failover undid would be a message the user cannot use.
        for (stored, wait) in try await client.committedExecute(statement, logger: logger) {
            return stored == 1 ? nil : Int(wait ?? 1)
        }
        return nil
    }

    @discardableResult
    public func discardCode(for address: Address, in appID: AppID) async throws -> Bool {
        let rows = try await client.committedQuery(
            """
            DELETE FROM \(unescaped: Table.name) WHERE app_id = \(appID.uuid) AND \(unescaped: Table.addressColumn) = \(address.text)
            RETURNING 1
            """, logger: logger)
        return !rows.isEmpty
    }

    /// Under a row lock, so concurrent checks of one code wait for each other.
    public func check(_ mac: [UInt8], for address: Address, in appID: AppID, keepingOnMatch: Bool) async throws -> CodeCheck {
        let (table, column, logger) = (Table.name, Table.addressColumn, logger)
        return try await client.transaction(logger: logger) { connection in
            let rows = try await connection.tracedQuery(
                """
                SELECT code_hmac, attempts_left, expires_at > now() FROM \(unescaped: table)
                WHERE app_id = \(appID.uuid) AND \(unescaped: column) = \(address.text) FOR UPDATE
                """, logger: logger)
            var found: (stored: [UInt8], attemptsLeft: Int, live: Bool)?
            for (stored, left, live) in try rows.decode((ByteBuffer, Int, Bool).self) {
                found = (Array(buffer: stored), left, live)
            }
            guard let found else { return .noCode }
            let verdict: CodeCheck
            if !found.live || found.attemptsLeft <= 0 {
                verdict = .noCode
            } else if ConstantTime.equals(found.stored, mac) {
                verdict = .accepted
            } else {
                verdict = .wrong(attemptsLeft: found.attemptsLeft - 1)
            }
            if case .wrong(let left) = verdict, left > 0 {
                try await connection.tracedQuery(
                    """
                    UPDATE \(unescaped: table) SET attempts_left = \(left)
                    WHERE app_id = \(appID.uuid) AND \(unescaped: column) = \(address.text)
                    """, logger: logger)
            } else if verdict == .accepted, keepingOnMatch {
                // Left live for the check that spends it.
            } else {
                try await connection.tracedQuery(
                    "DELETE FROM \(unescaped: table) WHERE app_id = \(appID.uuid) AND \(unescaped: column) = \(address.text)",
                    logger: logger)
            }
            return verdict
        }
    }
}

/// The store-unless-too-soon statement of one code table, with the
/// outbox row of the code's message when there is one.
private struct StoreCode<Table: CodeTable>: PostgresPreparedStatement {
    static var name: String { "\(Table.name)_store" }
    static var sql: String {
        """
        WITH stored AS (
            INSERT INTO \(Table.name) AS c (app_id, \(Table.addressColumn), code_hmac, attempts_left, sent_at, expires_at)
            VALUES ($1, $2, $3, $4, now(), now() + make_interval(secs => $5))
            ON CONFLICT (app_id, \(Table.addressColumn)) DO UPDATE SET code_hmac = excluded.code_hmac,
                attempts_left = excluded.attempts_left, sent_at = excluded.sent_at, expires_at = excluded.expires_at
            WHERE c.expires_at <= now() OR c.sent_at <= now() - make_interval(secs => $6)
            RETURNING 1
        ), queued AS (
            INSERT INTO outbox (app_id, message_id, channel, payload, request_id, user_id, expires_at)
            SELECT $1, $7, $8, $9, $10, $11, now() + make_interval(secs => $5)
            WHERE $7::uuid IS NOT NULL AND EXISTS (SELECT 1 FROM stored)
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM stored)::int8,
               (SELECT greatest(1, ceil(extract(epoch FROM
                    c.sent_at + make_interval(secs => $6) - clock_timestamp())))::int8
                FROM \(Table.name) c WHERE c.app_id = $1 AND c.\(Table.addressColumn) = $2)
        """
    }
    let appID: AppID
    let address: String
    let mac: [UInt8]
    let attempts: Int
    let lifetimeSeconds: Int
    let resendAfterSeconds: Int
    let message: OutboxMessage?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 11)
        bindings.append(appID.uuid)
        bindings.append(address)
        bindings.append(ByteBuffer(bytes: mac))
        bindings.append(Int32(attempts))
        bindings.append(Int32(lifetimeSeconds))
        bindings.append(Int32(resendAfterSeconds))
        if let message {
            bindings.append(message.id)
            bindings.append(message.channel)
            bindings.append(ByteBuffer(bytes: message.payload))
            bindings.append(message.requestID)
            bindings.append(message.userID)
        } else {
            bindings.appendNull()
            bindings.appendNull()
            bindings.appendNull()
            bindings.appendNull()
            bindings.appendNull()
        }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (Int64, Int64?) { try row.decode((Int64, Int64?).self) }
}
