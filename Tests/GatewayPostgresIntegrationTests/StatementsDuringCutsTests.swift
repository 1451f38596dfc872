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
            let progress = Progress()
            let total = Self.workers * Self.statementsEach
            for worker in 0..<Self.workers {
                Task {
                    for _ in 0..<Self.statementsEach {
                        do {
                            try await Self.statement(kind: worker % 4, on: client)
                            progress.record(answered: true)
                        } catch {
                            progress.record(answered: false, transient: TransientFailure.isTransient(error))
                        }
                    }
                    progress.workerFinished()
                }
            }
            let deadline = ContinuousClock.now + .seconds(60)
            // One connection does every cut, so the cuts never end their own.
            let terminated = try await TestDatabase.withClient(url) { client in try await client.withConnection { killer in
                var terminated = 0
                for cut in 1...Self.cuts {
                    // The next cut comes once the workers have moved on since the last one.
                    guard await progress.wait(until: deadline, for: { $0.statements >= cut * total / (Self.cuts + 1) })
                    else { break }
                    let rows = try await killer.query(
                        """
                        SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int
                        FROM (SELECT pid FROM pg_stat_activity
                              WHERE datname = current_database() AND backend_type = 'client backend'
                                AND pid <> pg_backend_pid() OFFSET 0) AS others
                        """, logger: TestDatabase.logger
                    ).collect()
                    terminated += try rows[0].decode(Int.self)
                }
                return terminated
            } }
            let finished = await progress.wait(until: deadline, for: { $0.finishedWorkers == Self.workers })
            let state = progress.state
            #expect(finished, "\(Self.workers - state.finishedWorkers) workers still wait for a statement's answer")
            #expect(state.statements == total)
            // The cuts reached the workers: some of their statements failed, most got rows.
            #expect(terminated >= Self.cuts)
            #expect(state.failed > 0)
            // Each failure is one the callers retry or answer 503 for.
            #expect(state.notTransient == 0)
            #expect(state.answered > total / 2, "\(state.answered) answered, \(state.failed) failed")
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

    /// What the workers have done so far; waiters resume when a condition holds, or at their deadline.
    final class Progress: Sendable {
        struct State: Sendable {
            var answered = 0
            var failed = 0
            var notTransient = 0
            var finishedWorkers = 0
            var statements: Int { answered + failed }
        }

        private struct Waiter {
            let condition: @Sendable (State) -> Bool
            let continuation: CheckedContinuation<Bool, Never>
        }

        private struct Shared {
            var state = State()
            var waiters: [Int: Waiter] = [:]
            var expired: Set<Int> = []
            var nextWaiter = 0
        }

        private let guarded = Mutex(Shared())

        var state: State { guarded.withLock { $0.state } }

        func record(answered: Bool, transient: Bool = true) {
            update { state in
                if answered { state.answered += 1 } else { state.failed += 1 }
                if !transient { state.notTransient += 1 }
            }
        }

        func workerFinished() { update { $0.finishedWorkers += 1 } }

        /// True once `condition` holds; false if `deadline` comes first.
        func wait(until deadline: ContinuousClock.Instant, for condition: @escaping @Sendable (State) -> Bool) async -> Bool {
            let id = guarded.withLock { guarded in
                guarded.nextWaiter += 1
                return guarded.nextWaiter
            }
            let timer = Task {
                try? await Task.sleep(until: deadline)
                expire(id)
            }
            defer { timer.cancel() }
            return await withCheckedContinuation { continuation in
                let holds: Bool? = guarded.withLock { guarded in
                    if condition(guarded.state) { return true }
                    if guarded.expired.contains(id) { return false }
                    guarded.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let holds { continuation.resume(returning: holds) }
            }
        }

        /// The deadline of waiter `id`: it gets false, now or when it registers.
        private func expire(_ id: Int) {
            let waiter = guarded.withLock { guarded -> Waiter? in
                guard let waiter = guarded.waiters.removeValue(forKey: id) else {
                    guarded.expired.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.continuation.resume(returning: false)
        }

        private func update(_ change: (inout State) -> Void) {
            let ready = guarded.withLock { guarded -> [Waiter] in
                change(&guarded.state)
                let state = guarded.state
                let ready = guarded.waiters.filter { $0.value.condition(state) }
                for id in ready.keys { guarded.waiters.removeValue(forKey: id) }
                return Array(ready.values)
            }
            for waiter in ready { waiter.continuation.resume(returning: true) }
        }
    }
}
