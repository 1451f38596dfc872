import Foundation
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// A failover terminates backends in the middle of transactions.
/// PostgresNIO never answers a query written to a connection that has
/// closed, so its own `withTransaction` waited forever for the ROLLBACK
/// after such a cut, holding its connection from the pool for good. The
/// gateway's `transaction` fails at once instead, with a transient failure.
/// A regression does not fail these tests: it hangs them, until the run's
/// time limit (`./scripts/test`) ends it.
@Suite struct TransactionTests {
    struct BodyFailed: Error {}

    /// Runs `body` in a transaction whose backend another client terminates
    /// first (waiting for its end): what a failover does between two statements.
    static func cutTransaction(
        client: PostgresClient, url: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> Void
    ) async throws {
        try await client.transaction(logger: TestDatabase.logger) { connection in
            let pid = try await connection.query("SELECT pg_backend_pid()", logger: TestDatabase.logger)
                .collect()[0].decode(Int32.self)
            try await TestDatabase.withClient(url) { killer in
                let ended = try await killer.query("SELECT pg_terminate_backend(\(pid), 10000)", logger: TestDatabase.logger)
                    .collect()[0].decode(Bool.self)
                #expect(ended)
            }
            try await connection.closeFuture.get()
            try await body(connection)
        }
    }

    @Test func aTransactionCutBetweenStatementsFailsAtOnce() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            let error = await #expect(throws: TransactionError.self) {
                try await Self.cutTransaction(client: client, url: url) { _ in throw BodyFailed() }
            }
            #expect(error?.closureError is BodyFailed)
            #expect(error?.rollbackError is ConnectionClosed)
            // The pool gave the connection back and serves the next query.
            let rows = try await client.query("SELECT 1", logger: TestDatabase.logger).collect()
            #expect(rows.count == 1)
        }
    }

    struct SelectOne: PostgresPreparedStatement {
        typealias Row = Int32
        static let sql = "SELECT 1"
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
    }

    /// `prepared`: a prepared statement (`tracedExecute`), else a query (`tracedQuery`).
    @Test(arguments: [false, true])
    func aStatementOnTheCutConnectionFailsAtOnceAsTransient(prepared: Bool) async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            let error = await #expect(throws: TransactionError.self) {
                try await Self.cutTransaction(client: client, url: url) { connection in
                    if prepared {
                        try await connection.tracedExecute(SelectOne(), logger: TestDatabase.logger)
                    } else {
                        try await connection.tracedQuery("SELECT 1", logger: TestDatabase.logger)
                    }
                }
            }
            #expect(error?.closureError is ConnectionClosed)
            #expect(error.map(TransientFailure.isTransient) == true)
        }
    }

    @Test func aBodyThatCompletesOnACutConnectionIsNotCommitted() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            let error = await #expect(throws: TransactionError.self) {
                try await Self.cutTransaction(client: client, url: url) { _ in }
            }
            #expect(error?.commitError is ConnectionClosed)
            #expect(error.map(TransientFailure.isTransient) == true)
        }
    }

    /// What a failed transaction says in a log is PostgreSQL's message, never the statement or its values.
    @Test func aFailedTransactionDescribesItsErrorWithoutTheStatementsValues() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let secret = "hunter2-\(UUID().uuidString)"
            // In the statement's text and as its value: a log of the error must hold neither.
            var binds = PostgresBindings()
            binds.append(secret)
            let statement = PostgresQuery(unsafeSQL: "SELECT 1 / 0 WHERE '\(secret)' <> $1", binds: binds)
            let error = await #expect(throws: TransactionError.self) {
                try await client.transaction(logger: TestDatabase.logger) { connection in
                    try await connection.tracedQuery(statement, logger: TestDatabase.logger)
                }
            }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("division by zero"))
            #expect(!text.contains(secret))
        }
    }
}
