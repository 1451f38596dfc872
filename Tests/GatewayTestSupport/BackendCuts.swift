public import GatewayCore
import GatewayPostgres
import PostgresNIO
import Synchronization

/// What a failover does to a gateway's connections, again and again: many
/// tasks send statements while one other connection terminates every client
/// backend of the database, `cuts` times, each cut once the tasks have moved
/// on since the last. A statement that never answers leaves its worker
/// unfinished, which ``Outcome/unfinishedWorkers`` reports at the deadline
/// instead of hanging.
public enum BackendCuts {
    public struct Outcome: Sendable {
        /// Statements that returned, and that threw.
        public var answered = 0
        public var failed = 0
        /// Failures `TransientFailure` does not call transient: ones no caller would wait out.
        public var notTransient = 0
        public var finishedWorkers = 0
        /// Backends the cuts terminated.
        public var terminated = 0
        public var statements: Int { answered + failed }
    }

    /// Runs `statement(worker)` `statementsEach` times in each of `workers`
    /// tasks while the database at `url` has its backends cut `cuts` times.
    public static func run(
        url: String, workers: Int, statementsEach: Int, cuts: Int, deadline: Duration = .seconds(60),
        statement: @escaping @Sendable (_ worker: Int) async throws -> Void
    ) async throws -> Outcome {
        let progress = Progress()
        let total = workers * statementsEach
        for worker in 0..<workers {
            Task {
                for _ in 0..<statementsEach {
                    do {
                        try await statement(worker)
                        progress.record(answered: true)
                    } catch {
                        progress.record(answered: false, transient: TransientFailure.isTransient(error))
                    }
                }
                progress.workerFinished()
            }
        }
        let deadline = ContinuousClock.now + deadline
        // One connection does every cut, so the cuts never end their own.
        let terminated = try await TestDatabase.withClient(url) { client in
            try await client.withConnection { killer in
                var terminated = 0
                for cut in 1...cuts {
                    // The next cut comes once the workers have moved on since the last one.
                    guard await progress.wait(until: deadline, for: { $0.statements >= cut * total / (cuts + 1) }) else { break }
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
            }
        }
        _ = await progress.wait(until: deadline, for: { $0.finishedWorkers == workers })
        var outcome = progress.state
        outcome.terminated = terminated
        return outcome
    }

    /// What the workers have done so far; waiters resume when a condition holds, or at their deadline.
    final class Progress: Sendable {
        private struct Waiter {
            let condition: @Sendable (Outcome) -> Bool
            let continuation: CheckedContinuation<Bool, Never>
        }

        private struct Shared {
            var state = Outcome()
            var waiters: [Int: Waiter] = [:]
            var expired: Set<Int> = []
            var nextWaiter = 0
        }

        private let guarded = Mutex(Shared())

        var state: Outcome { guarded.withLock { $0.state } }

        func record(answered: Bool, transient: Bool = true) {
            update { state in
                if answered { state.answered += 1 } else { state.failed += 1 }
                if !transient { state.notTransient += 1 }
            }
        }

        func workerFinished() { update { $0.finishedWorkers += 1 } }

        /// True once `condition` holds; false if `deadline` comes first.
        func wait(until deadline: ContinuousClock.Instant, for condition: @escaping @Sendable (Outcome) -> Bool) async -> Bool {
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

        private func update(_ change: (inout Outcome) -> Void) {
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

extension DatabaseRetry {
    /// What a replica with a retry window does with a read that fails over:
    /// tries it again, for up to 30 s, after each failure `TransientFailure` calls transient.
    public static let waitingOutFailovers = DatabaseRetry(
        attemptTimeout: .seconds(20), window: .seconds(30), isTransient: TransientFailure.isTransient)
}
