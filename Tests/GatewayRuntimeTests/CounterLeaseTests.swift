import Foundation
import GatewayCore
import GatewayPluginKit
@testable import GatewayRuntime
import Synchronization
import Testing

/// High limits spent from leased blocks (`CounterLeases`): replicas share one
/// set of counters (``SharedCounters``, as PostgreSQL would hold them), and
/// each test counts what the limit let through and what reached the counters.
@Suite struct CounterLeaseTests {
    static let app = AppID(uuid: UUID())
    /// Leases from limits of 1 000 (the default, spelled out).
    static let leasing = RateLimitSettings(leaseMinimumLimit: 1_000)

    static func settings(appLimit: Int, period: Int = 86_400) -> AppSettings {
        AppSettings(
            appID: Self.app, name: "Leases", environment: .development, providerID: ProviderID(uuid: UUID()),
            credentialTypes: ["static"], rateLimits: ["app": RateLimitOverride(limit: appLimit, periodSeconds: period)])
    }

    /// A replica: its own blocks, the shared counters, a clock the test moves.
    static func replica(_ counters: SharedCounters, clock: TestClock) -> RateLimiter {
        RateLimiter(ledger: counters, settings: Self.leasing, leases: CounterLeases(), now: { clock.now })
    }

    /// Sends `count` requests, alternating over `replicas`; returns how many were let through.
    static func send(_ count: Int, over replicas: [RateLimiter], app: AppSettings) async throws -> Int {
        var allowed = 0
        for index in 0..<count {
            let outcome = try await replicas[index % replicas.count].check(["app": "app"], app: app, clientCounted: true)
            if outcome.refusal == nil { allowed += 1 }
        }
        return allowed
    }

    @Test func twoReplicasNeverLetMoreThroughThanTheLimitAndLittleLess() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replicas = [Self.replica(counters, clock: clock), Self.replica(counters, clock: clock)]
        let app = Self.settings(appLimit: 1_000)
        let early = try await Self.send(900, over: replicas, app: app)
        #expect(early == 900)
        // Far from the limit a block (8 units, then 1/64 of the limit: 15) serves many requests.
        #expect(counters.touchesSent < 100, "\(counters.touchesSent) touches for 900 requests")
        let allowed = try await early + Self.send(600, over: replicas, app: app)
        #expect(allowed <= 1_000)
        // Each replica strands at most one block and refuses at most one request uncounted.
        #expect(allowed >= 1_000 - 2 * 15 - 2, "\(allowed)")
    }

    @Test func theBlocksGrowFromA1024thToA64thOfTheLimit() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = Self.replica(counters, clock: clock)
        let allowed = try await Self.send(2_000, over: [replica], app: Self.settings(appLimit: 64_000))
        #expect(allowed == 2_000)
        // 62 + 124 + 248 + 496 + 992, then blocks of 1 000: 2 000 requests take 6 blocks.
        #expect(counters.unitsAskedFor == [62, 124, 248, 496, 992, 1_000])
    }

    /// Where 1/1024 of the limit is less than 8 units, the first block is 8.
    @Test func aFirstBlockIsAtLeastEightUnits() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = Self.replica(counters, clock: clock)
        #expect(try await Self.send(30, over: [replica], app: Self.settings(appLimit: 6_400)) == 30)
        #expect(counters.unitsAskedFor == [8, 16, 32])
    }

    @Test func aLimitBelowTheLeaseMinimumIsTouchedOnceARequestAndCountsEveryRefusal() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = Self.replica(counters, clock: clock)
        let allowed = try await Self.send(1_200, over: [replica], app: Self.settings(appLimit: 999))
        #expect(allowed == 999)
        #expect(counters.touchesSent == 1_200)
        #expect(counters.unitsAskedFor.isEmpty)
        #expect(counters.current(at: clock.now) == 1_200)
    }

    @Test func nearTheLimitEachRequestIsCountedRefusalsIncluded() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = Self.replica(counters, clock: clock)
        let app = Self.settings(appLimit: 1_000)
        _ = try await Self.send(1_000, over: [replica], app: app)
        let before = counters.current(at: clock.now)
        let refused = try await Self.send(50, over: [replica], app: app)
        #expect(refused == 0)
        // At most one refusal (a block asked for where none was left) goes uncounted.
        #expect(counters.current(at: clock.now) - before >= 49)
    }

    @Test func aPastWindowsUnspentUnitsGoBackWithTheNextTouch() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000 * 60)
        let replica = Self.replica(counters, clock: clock)
        let app = Self.settings(appLimit: 6_400, period: 60)
        _ = try await Self.send(10, over: [replica], app: app)
        let first = clock.now
        // Blocks of 8 and 16: 24 units taken, 10 spent.
        #expect(counters.current(at: first, period: 60) == 24)
        clock.now += 60
        _ = try await Self.send(1, over: [replica], app: app)
        #expect(counters.current(at: first, period: 60) == 10, "the 14 unspent went back")
    }

    /// A counter that spends less than a first block a window (an app among
    /// many, a few tokens a minute) keeps its few unspent units counted: its
    /// next window's first touch is one row, not that row and the past one's.
    @Test func aPastWindowsUnspentUnitsNoMoreThanAFirstBlockStayCounted() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000 * 60)
        let replica = Self.replica(counters, clock: clock)
        let app = Self.settings(appLimit: 6_400, period: 60)
        _ = try await Self.send(3, over: [replica], app: app)
        let first = clock.now
        // A first block of 8: 3 spent, 5 unspent.
        #expect(counters.current(at: first, period: 60) == 8)
        clock.now += 60
        let touches = counters.touchesSent
        #expect(try await Self.send(1, over: [replica], app: app) == 1)
        #expect(counters.touchesSent == touches + 1, "the new window's block alone")
        #expect(counters.current(at: first, period: 60) == 8, "the 5 unspent stay counted")
        // Weighing on the new window by its overlap: at its start, 8 of its 6 400.
        #expect(counters.current(at: clock.now, period: 60) == 8)
    }

    /// Issue 56.2: a change of period neither hands a block back to a window
    /// of the new period nor starts the counter from empty.
    @Test func aChangeOfPeriodGivesABlockBackToItsOwnWindowAndStartsFromTheLimitSpent() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000 * 60 + 30)
        let replica = Self.replica(counters, clock: clock)
        var app = Self.settings(appLimit: 6_400, period: 60)
        #expect(try await Self.send(10, over: [replica], app: app) == 10)
        let first = clock.now
        #expect(counters.current(at: first, period: 60) == 24)

        clock.now += 1
        app.rateLimits["app"] = RateLimitOverride(limit: 6_400, periodSeconds: 61)
        app.rateLimitChanges.periodChangedAt["app"] = Int64(clock.now)
        #expect(try await Self.send(1, over: [replica], app: app) == 0, "the whole limit counts as spent at the change")
        #expect(counters.current(at: first, period: 60) == 10, "the 14 unspent went back to the window they came from")

        // Over the new period after the change, at most the limit passes, as it frees (104.9 a second):
        // 100 requests a second pass once it has freed that much.
        var allowed = 0
        for _ in 0..<61 {
            clock.now += 1
            allowed += try await Self.send(100, over: [replica], app: app)
        }
        #expect(allowed <= 6_400, "\(allowed)")
        #expect(allowed >= 6_000, "\(allowed)")
    }

    @Test func aBlockWhoseStatementFailedIsAskedForAgain() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = Self.replica(counters, clock: clock)
        let app = Self.settings(appLimit: 64_000)
        counters.failNext()
        await #expect(throws: SharedCounters.Failure.self) { _ = try await Self.send(1, over: [replica], app: app) }
        #expect(try await Self.send(100, over: [replica], app: app) == 100)
        // Blocks again, not one touch a request: the failed ask did not leave the counter waiting on it.
        #expect(counters.touchesSent < 10, "\(counters.touchesSent)")
    }

    @Test func aFaultThatLosesAnswersAfterTheirCommitStrandsOneBlockNotOneARequest() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = Self.replica(counters, clock: clock)
        let app = Self.settings(appLimit: 64_000)
        // The blocks grow to 1 000 units (1/64 of the limit): 2 922 units taken, 16 left in the block.
        var allowed = try await Self.send(2_906, over: [replica], app: app)
        #expect(allowed == 2_906)
        // Every statement commits and its answer is lost, as when a connection is cut while
        // synchronous replication holds the commit: the replica cannot know what it was granted.
        counters.loseAnswers(true)
        var failed = 0
        for _ in 0..<100 {
            do {
                if try await replica.check(["app": "app"], app: app, clientCounted: true).refusal == nil { allowed += 1 }
            } catch is SharedCounters.Failure {
                failed += 1
            }
        }
        #expect(failed == 84, "the 16 units left in the block serve 16 requests")
        counters.loseAnswers(false)
        let asksBefore = counters.unitsAskedFor.count
        allowed += try await Self.send(70_000, over: [replica], app: app)
        #expect(allowed <= 64_000)
        // The block in flight when the fault began, and one unit for each failed request after it.
        #expect(allowed >= 64_000 - 1_000 - (failed - 1) - 1, "\(allowed) let through")
        #expect(Array(counters.unitsAskedFor.dropFirst(asksBefore).prefix(3)) == [62, 124, 248], "blocks start again from the first")
    }

    @Test func aFloodOfNewSubjectsHoldsAtMostTheCapacityAndIsSweptOncePast() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000 * 60)
        let leases = CounterLeases(capacity: 1_000)
        let replica = RateLimiter(ledger: counters, settings: Self.leasing, leases: leases, now: { clock.now })
        let app = Self.settings(appLimit: 1_000_000, period: 60)
        for index in 0..<(leases.capacity + 50) {
            let outcome = try await replica.check(["app": "subject-\(index)"], app: app, clientCounted: true)
            #expect(outcome.refusal == nil)
        }
        #expect(leases.count == leases.capacity, "the 50 past the capacity were touched exactly, not held")
        // Two periods on, the old counters weigh on nothing: a new subject sweeps them.
        clock.now += 180
        _ = try await replica.check(["app": "late"], app: app, clientCounted: true)
        #expect(leases.count == 1)
    }

    @Test func aReplicaThatStopsStrandsAtMostItsBlock() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let app = Self.settings(appLimit: 1_000)
        let stopping = Self.replica(counters, clock: clock)
        let first = try await Self.send(100, over: [stopping], app: app)
        // `stopping` is gone; the other replica spends what is left.
        let other = Self.replica(counters, clock: clock)
        let second = try await Self.send(2_000, over: [other], app: app)
        #expect(first + second <= 1_000)
        #expect(first + second >= 1_000 - 2 * 15 - 1, "\(first) + \(second)")
    }
}

/// A clock the test moves, in seconds since the epoch.
final class TestClock: Sendable {
    private let time: Mutex<Double>
    init(now: Double) { time = Mutex(now) }
    var now: Double {
        get { time.withLock { $0 } }
        set { time.withLock { $0 = newValue } }
    }
}

/// Counters shared by the replicas of a test, counted as ``MemoryCounters``
/// counts (the semantics PostgreSQL is held to), with what reached them.
final class SharedCounters: RequestLedger {
    private struct State {
        var counters = MemoryCounters()
        var touchesSent = 0
        var unitsAskedFor: [Int] = []
        var byWindow: [Int64: Int] = [:]
    }

    private let state = Mutex(State())
    private let failing = Mutex(false)
    private let losingAnswers = Mutex(false)

    struct Failure: Error {}

    /// The next statement fails, as a lost connection would.
    func failNext() { failing.withLock { $0 = true } }

    /// While on, every statement is applied and then fails: a commit whose answer was lost.
    func loseAnswers(_ on: Bool) { losingAnswers.withLock { $0 = on } }

    var touchesSent: Int { state.withLock { $0.touchesSent } }
    /// The units of every reservation of more than one unit (a block), in order.
    var unitsAskedFor: [Int] { state.withLock { $0.unitsAskedFor } }

    /// The counter's current count in the window of `period` seconds holding `time`.
    func current(at time: Double, period: Int = 86_400) -> Int {
        let start = Int64((time / Double(period)).rounded(.down)) * Int64(period)
        return state.withLock { $0.byWindow[start, default: 0] }
    }

    func count(_ touches: [CounterTouch]) async throws -> [CounterReading] {
        if failing.withLock({ failing in defer { failing = false }; return failing }) { throw Failure() }
        let readings = state.withLock { state in
            touches.map { touch in
                state.touchesSent += 1
                if touch.mode == .reserve && touch.units > 1 { state.unitsAskedFor.append(touch.units) }
                let reading = state.counters.apply(touch)
                if touch.mode != .read { state.byWindow[touch.window.windowStart] = reading.current }
                return reading
            }
        }
        if losingAnswers.withLock({ $0 }) { throw Failure() }
        return readings
    }

    func countAndRecord(_ touches: [CounterTouch], ifAllowed event: AuditEvent, changing session: SessionChange?) async throws
        -> Admission
    {
        let counts = try await count(touches)
        return Admission(counts: counts, admitted: counts.allSatisfy(\.allowed))
    }

    func record(_ event: AuditEvent) async throws {}
    func recordEventually(_ event: AuditEvent) async {}
}
