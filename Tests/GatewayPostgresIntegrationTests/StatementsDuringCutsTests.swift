@testable import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Synchronization
import Testing

/// A failover terminates every backend while statements are in flight and
/// others are being sent. PostgresNIO never answers a statement written to a
/// connection that has just closed, and its pool can lease one whose close it
/// has not processed yet: such a statement waited forever and kept its
/// connection from the pool. Here many tasks send statements through every
/// path the gateway has (a pooled query and prepared statement, a
/// transaction's, a committed write) while another client terminates all
/// their backends, again and again: every statement must answer, with rows
/// or an error. A statement that never answers leaves its worker unfinished,
/// which the test reports at its deadline instead of hanging.
@Suite struct StatementsDuringCutsTests {
    static let workers = 24
    static let statementsEach = 160
    static let cuts = 20

    @Test func everyStatementAnswersWhileItsBackendsAreTerminated() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            let outcome = try await BackendCuts.run(
                url: url, workers: Self.workers, statementsEach: Self.statementsEach, cuts: Self.cuts
            ) { worker in
                try await Self.statement(kind: worker % 4, on: client)
            }
            #expect(outcome.finishedWorkers == Self.workers, "\(Self.workers - outcome.finishedWorkers) workers still wait for a statement's answer")
            #expect(outcome.statements == Self.workers * Self.statementsEach)
            // The cuts reached the workers: some of their statements failed, most got rows.
            #expect(outcome.terminated >= Self.cuts)
            #expect(outcome.failed > 0)
            // Each failure is one the callers retry or answer 503 for.
            #expect(outcome.notTransient == 0)
            #expect(outcome.answered > outcome.statements / 2, "\(outcome.answered) answered, \(outcome.failed) failed")
            // The pool serves after the storm.
            let rows = try await client.tracedQuery("SELECT 1", logger: TestDatabase.logger)
            #expect(rows.count == 1)
        }
    }

    /// What the test above relies on, shown directly: `whileOpen` checks the
    /// connection on its event loop, and its body's first nonisolated async
    /// call (PostgresNIO's `query`, which writes before it suspends) runs in
    /// the same stretch, before anything queued on the loop meanwhile (a
    /// close would be queued like that).
    @Test func whileOpenRunsItsBodyOnTheEventLoopWithNothingInBetween() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            try await client.withConnection { connection in
                let queued = Flag()
                let (onLoop, overtaken) = try await connection.whileOpen { () async throws -> (Bool, Bool) in
                    connection.eventLoop.execute { queued.raise() }
                    return await Self.firstStep(on: connection.eventLoop, before: queued)
                }
                #expect(onLoop)
                #expect(!overtaken)
            }
        }
    }

    /// A nonisolated async step: where it runs, and whether `queued` was raised before it.
    static func firstStep(on eventLoop: any EventLoop, before queued: Flag) async -> (onLoop: Bool, overtaken: Bool) {
        (eventLoop.inEventLoop, queued.isRaised)
    }

    final class Flag: Sendable {
        private let raised = Mutex(false)
        var isRaised: Bool { raised.withLock { $0 } }
        func raise() { raised.withLock { $0 = true } }
    }

    struct SelectOne: PostgresPreparedStatement {
        typealias Row = Int32
        static let sql = "SELECT 1"
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
    }

    /// One statement by each of the gateway's paths to PostgreSQL.
    static func statement(kind: Int, on client: PostgresClient) async throws {
        let logger = TestDatabase.logger
        switch kind {
        case 0:
            let rows = try await client.tracedQuery("SELECT 1", logger: logger)
            #expect(rows.count == 1)
        case 1:
            let rows = try await client.tracedExecute(SelectOne(), logger: logger)
            #expect(rows == [1])
        case 2:
            try await client.transaction(logger: logger) { connection in
                let selected = try await connection.tracedQuery("SELECT 1", logger: logger)
                let executed = try await connection.tracedExecute(SelectOne(), logger: logger)
                #expect(selected.count == 1 && executed == [1])
            }
        default:
            let rows = try await client.committedQuery("SELECT 1", logger: logger)
            #expect(rows.count == 1)
        }
    }
}
