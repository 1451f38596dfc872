import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// A write the gateway reports is one PostgreSQL has committed. A
/// statement's rows come back before its COMMIT, which can still fail: here a
/// deferred trigger refuses rows at COMMIT, as a failover's fast shutdown can
/// end the backend there. Such a write is reported as failed, whether it
/// went through `committedQuery`, `committedExecute` or a ledger batch, and
/// nothing of it stays.
@Suite struct CommitConfirmationTests {
    /// Refuses, at COMMIT, a row of `table` whose `column` starts with "doomed".
    static func refuseAtCommit(_ table: String, column: String, on client: PostgresClient) async throws {
        try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE FUNCTION refuse_doomed_\(table)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        IF NEW.\(column) LIKE 'doomed%' THEN RAISE EXCEPTION 'refused at commit'; END IF;
                        RETURN NULL;
                    END $$
                    """), logger: TestDatabase.logger)
        try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE CONSTRAINT TRIGGER refuse_doomed AFTER INSERT ON \(table) DEFERRABLE INITIALLY DEFERRED
                    FOR EACH ROW EXECUTE FUNCTION refuse_doomed_\(table)()
                    """), logger: TestDatabase.logger)
    }

    struct Insert: PostgresPreparedStatement {
        typealias Row = String
        static let name = "commit_confirmation_insert"
        static let sql = "INSERT INTO writes (label) VALUES ($1) RETURNING label"
        let label: String
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(label)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> String { try row.decode(String.self) }
    }

    @Test func aLoneWriteWhoseCommitFailsIsReportedFailed() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            try await client.query("CREATE TABLE writes (label text NOT NULL)", logger: TestDatabase.logger)
            try await Self.refuseAtCommit("writes", column: "label", on: client)

            let kept = try await client.committedQuery("INSERT INTO writes (label) VALUES ('kept') RETURNING label", logger: TestDatabase.logger)
            #expect(try kept.map { try $0.decode(String.self) } == ["kept"])
            #expect(try await client.committedExecute(Insert(label: "kept too"), logger: TestDatabase.logger) == ["kept too"])

            // Each of these has had its row back when its COMMIT fails.
            await #expect(throws: (any Error).self) {
                try await client.committedQuery("INSERT INTO writes (label) VALUES ('doomed 1') RETURNING label", logger: TestDatabase.logger)
            }
            await #expect(throws: (any Error).self) {
                try await client.committedExecute(Insert(label: "doomed 2"), logger: TestDatabase.logger)
            }
            let stored = try await client.query("SELECT label FROM writes ORDER BY label", logger: TestDatabase.logger)
                .collect().map { try $0.decode(String.self) }
            #expect(stored == ["kept", "kept too"])
        }
    }

    /// Without retries and with them (a retry's statement differs): a batch
    /// whose COMMIT fails admits nothing, and its counts go with it.
    @Test(arguments: [Duration.zero, .seconds(5)])
    func aLedgerBatchWhoseCommitFailsAdmitsNothing(retryWindow: Duration) async throws {
        try await TestDatabase.with { client, _ in
            try await Self.refuseAtCommit("audit_events", column: "request_id", on: client)
            let ledger = PostgresRequestLedger(
                client: client, logger: TestDatabase.logger, timeout: .seconds(60), retryWindow: retryWindow)
            let appID = AppID(uuid: UUID())
            let policy = RateLimitPolicy(name: "app", limit: 10, periodSeconds: 3_600, counting: .everyRequest)
            let touch = CounterTouch(
                appID: appID, window: SlidingWindow(policy: policy, now: Date().timeIntervalSince1970), subject: "*", mode: .count)
            func row(_ requestID: String) -> AuditEvent {
                AuditEvent(appID: appID, event: "token.issued", outcome: .success, requestID: requestID)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await ledger.run() }
                await #expect(throws: (any Error).self) {
                    try await ledger.countAndRecord([touch], ifAllowed: row("doomed-1"))
                }
                let admission = try await ledger.countAndRecord([touch], ifAllowed: row("kept-1"))
                #expect(admission.admitted)
                // The refused batch's count was rolled back with its row.
                #expect(admission.counts.map(\.current) == [1])
                group.cancelAll()
            }
            let stored = try await client.query("SELECT request_id FROM audit_events ORDER BY request_id", logger: TestDatabase.logger)
                .collect().map { try $0.decode(String.self) }
            #expect(stored == ["kept-1"])
        }
    }
}
