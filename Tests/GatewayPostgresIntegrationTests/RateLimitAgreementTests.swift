import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import Testing

/// Rate-limit semantics live in Swift (`SlidingWindow.touch`, which the
/// in-memory counters and the per-address throttle use) and in SQL
/// (`SlidingWindowSQL`, run by `LedgerWriteStatement`), side by side in
/// GatewayCore's `RateLimit/`. One table of touch sequences with the readings
/// each step must give, and random sequences, hold both to the same answers:
/// a change to either that the other lacks fails here.
@Suite struct RateLimitAgreementTests {
    /// One touch, `at` seconds after the start of a window, and what it must read.
    struct Step: Sendable, CustomStringConvertible {
        let at: Double
        let mode: CounterTouch.Mode
        let units: Int
        let expected: CounterReading

        /// `granted` is a reservation's grant, when it is not its one unit (or none, refused).
        init(
            _ at: Double, _ mode: CounterTouch.Mode, units: Int = 1, current: Int, previous: Int, _ allowed: Bool,
            granted: Int? = nil
        ) {
            self.at = at
            self.mode = mode
            self.units = units
            self.expected = CounterReading(
                current: current, previous: previous, allowed: allowed,
                granted: granted ?? (mode == .reserve && allowed ? 1 : 0))
        }

        var description: String { "\(mode) of \(units) at +\(at) s" }
    }

    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let limit: Int
        let steps: [Step]
        var description: String { name }
    }

    static let period = 60

    static let table: [Case] = [
        Case(
            name: "reservations stop at the limit and a release makes room", limit: 3,
            steps: [
                Step(1, .reserve, current: 1, previous: 0, true),
                Step(2, .reserve, current: 2, previous: 0, true),
                Step(3, .reserve, current: 3, previous: 0, true),
                Step(4, .reserve, current: 3, previous: 0, false),
                Step(5, .read, current: 3, previous: 0, false),
                Step(6, .release, current: 2, previous: 0, true),
                Step(7, .read, current: 2, previous: 0, true),
                Step(8, .reserve, current: 3, previous: 0, true),
            ]),
        Case(
            name: "counts go past the limit and say so", limit: 2,
            steps: [
                Step(1, .count, current: 1, previous: 0, true),
                Step(2, .count, current: 2, previous: 0, true),
                Step(3, .count, current: 3, previous: 0, false),
                Step(4, .read, current: 3, previous: 0, false),
                Step(5, .reserve, current: 3, previous: 0, false),
            ]),
        Case(
            name: "the previous window weighs by its overlap", limit: 4,
            steps: [
                Step(10, .count, current: 1, previous: 0, true),
                Step(11, .count, current: 2, previous: 0, true),
                Step(12, .count, current: 3, previous: 0, true),
                Step(13, .count, current: 4, previous: 0, true),
                // Half into the next window the four weigh two: two more fit.
                Step(90, .reserve, current: 1, previous: 4, true),
                Step(90, .reserve, current: 2, previous: 4, true),
                Step(90, .reserve, current: 2, previous: 4, false),
                Step(90, .read, current: 2, previous: 4, false),
                // Three quarters in, they weigh one: one more fits.
                Step(105, .reserve, current: 3, previous: 4, true),
                Step(105, .reserve, current: 3, previous: 4, false),
            ]),
        Case(
            name: "a release never goes below zero", limit: 1,
            steps: [
                Step(1, .release, current: 0, previous: 0, true),
                Step(2, .reserve, current: 1, previous: 0, true),
                Step(3, .release, current: 0, previous: 0, true),
                Step(4, .release, current: 0, previous: 0, true),
            ]),
        Case(
            name: "a lease takes what room is left, and a release of several makes room", limit: 10,
            steps: [
                Step(1, .reserve, units: 4, current: 4, previous: 0, true, granted: 4),
                Step(2, .reserve, units: 4, current: 8, previous: 0, true, granted: 4),
                Step(3, .reserve, units: 4, current: 10, previous: 0, true, granted: 2),
                Step(4, .reserve, units: 4, current: 10, previous: 0, false, granted: 0),
                Step(5, .count, current: 11, previous: 0, false),
                Step(6, .release, units: 3, current: 8, previous: 0, true),
                Step(7, .read, current: 8, previous: 0, true),
                Step(8, .reserve, units: 5, current: 10, previous: 0, true, granted: 2),
                Step(9, .release, units: 50, current: 0, previous: 0, true),
            ]),
        Case(
            name: "a lease meets the previous window's weight", limit: 10,
            steps: [
                Step(1, .reserve, units: 10, current: 10, previous: 0, true, granted: 10),
                // Half into the next window the ten weigh five: five fit.
                Step(90, .reserve, units: 8, current: 5, previous: 10, true, granted: 5),
                Step(91, .reserve, units: 8, current: 5, previous: 10, false, granted: 0),
            ]),
        Case(
            name: "two windows on, the old counts are gone", limit: 1,
            steps: [
                Step(1, .count, current: 1, previous: 0, true),
                Step(2, .count, current: 2, previous: 0, false),
                Step(125, .reserve, current: 1, previous: 0, true),
            ]),
    ]

    @Test(arguments: table)
    func theSQLAndTheSwiftModelGiveTheTablesReadings(_ testCase: Case) async throws {
        try await Self.withLedger { ledger in
            var model = MemoryCounters()
            let policy = RateLimitPolicy(
                name: "agreement", limit: testCase.limit, periodSeconds: Self.period,
                counting: .everyRequest)
            let start = Self.windowStart()
            let subject = UUID().uuidString
            for step in testCase.steps {
                let touch = CounterTouch(
                    appID: AppID(uuid: AuditEvent.noApp),
                    window: SlidingWindow(policy: policy, now: start + step.at),
                    subject: subject, mode: step.mode, units: step.units)
                #expect(model.apply(touch) == step.expected, "Swift: \(testCase), \(step)")
                let sql = try await ledger.count([touch]).first
                #expect(sql == step.expected, "SQL: \(testCase), \(step)")
            }
        }
    }

    /// Random sequences (modes, limits, time moving on by up to a window and
    /// a half) read the same from PostgreSQL as from the Swift model, step by step.
    @Test func randomSequencesReadTheSameFromTheSQLAsFromTheSwiftModel() async throws {
        let seed = UInt64(Date().timeIntervalSince1970 * 1000)
        try await Self.withLedger { ledger in
            var random = SplitMix64(seed: seed)
            let modes: [CounterTouch.Mode] = [.count, .reserve, .reserve, .release, .read]
            for sequence in 0..<20 {
                var model = MemoryCounters()
                let policy = RateLimitPolicy(
                    name: "agreement", limit: Int(random.next() % 12) + 1, periodSeconds: Self.period,
                    counting: .everyRequest)
                var now = Self.windowStart() + Double(random.next() % 60)
                let subject = UUID().uuidString
                for step in 0..<40 {
                    // Mostly within a second; now and then across an edge or two.
                    now +=
                        random.next() % 8 == 0
                        ? Double(random.next() % 90) : Double(random.next() % 1000) / 1000
                    let mode = modes[Int(random.next() % UInt64(modes.count))]
                    // Reservations and releases of several units too (a lease, its return).
                    let units = mode == .reserve || mode == .release ? Int(random.next() % 4) + 1 : 1
                    let touch = CounterTouch(
                        appID: AppID(uuid: AuditEvent.noApp), window: SlidingWindow(policy: policy, now: now),
                        subject: subject, mode: mode, units: units)
                    let swift = model.apply(touch)
                    let sql = try await ledger.count([touch]).first
                    #expect(
                        sql == swift,
                        "seed \(seed), sequence \(sequence), step \(step): \(touch.mode) of \(units), limit \(policy.limit)"
                    )
                    if sql != swift { return }
                }
            }
        }
    }

    /// A ledger over a fresh database, its writer running while `body` does.
    static func withLedger(_ body: @escaping @Sendable (PostgresRequestLedger) async throws -> Void)
        async throws
    {
        try await TestDatabase.with { client, _ in
            let ledger = PostgresRequestLedger(
                client: client, logger: TestDatabase.logger, timeout: .seconds(60))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await ledger.run() }
                defer { group.cancelAll() }
                try await body(ledger)
            }
        }
    }

    /// The start of a window a little in the past: the counters' rows expire
    /// two periods after their window, and no step may outlive its row.
    static func windowStart() -> Double {
        (Date().timeIntervalSince1970 / Double(period)).rounded(.down) * Double(period) - Double(period)
    }
}
