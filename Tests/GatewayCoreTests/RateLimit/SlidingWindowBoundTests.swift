import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// What a sliding-window counter guarantees, counted (issue 56, Low: the
/// README once promised `limit` in any span of `period_seconds`, which it
/// does not), and what a change of period does.
@Suite struct SlidingWindowBoundTests {
    static let policy = RateLimitPolicy(name: "ip", limit: 300, periodSeconds: 60, counting: .everyRequest)
    static let epoch = 1_800_000_000.0  // a window start for 60 s periods

    /// Every request at `times` (seconds), touching its counter as `mode`
    /// says (a `.reserve` adds only what fits: the most a limit lets
    /// through); the times of those that passed.
    static func passed(at times: [Double], policy: RateLimitPolicy = policy, mode: CounterTouch.Mode = .count) -> [Double] {
        var counters = MemoryCounters()
        let app = AppID(uuid: UUID())
        return times.filter { time in
            let touch = CounterTouch(appID: app, window: SlidingWindow(policy: policy, now: time), subject: "s", mode: mode)
            return counters.apply(touch).allowed
        }
    }

    /// docs/limits-and-audit.md's example: 300 at the end of one window let 50 more through
    /// in the first 10 s of the next, 350 within one period.
    @Test func aFullWindowAtItsEndLetsTheNextWindowsShareThroughWithinOnePeriod() {
        let end = (0..<300).map { Self.epoch + 59.5 + Double($0) / 1_000 }
        let next = (0..<1_000).map { Self.epoch + 60 + Double($0) / 100 }  // 10 requests a second for 10 s
        let passed = Self.passed(at: end + next, mode: .reserve)
        #expect(passed.filter { $0 < Self.epoch + 60 }.count == 300)
        // 300 × 10/60 = 50, less a hair of floating point at the 10th second.
        #expect((49...50).contains(passed.filter { $0 >= Self.epoch + 60 }.count))
        #expect(passed.count >= 349, "within 10.5 s, over the limit of 300 a minute")
    }

    /// For random bursts over six windows: at most `limit` in each fixed
    /// window, at most twice `limit` in any span of one period.
    @Test(arguments: 1...20)
    func theBoundsHoldForRandomBursts(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        var times: [Double] = []
        for _ in 0..<40 {
            let start = Self.epoch + Double.random(in: 0..<360, using: &random)
            let width = Double.random(in: 0.001..<20, using: &random)
            for _ in 0..<Int.random(in: 1..<400, using: &random) { times.append(start + Double.random(in: 0..<width, using: &random)) }
        }
        for mode in [CounterTouch.Mode.count, .reserve] {
            let passed = Self.passed(at: times.sorted(), mode: mode)
            for window in 0..<6 {
                let start = Self.epoch + Double(window) * 60
                #expect(passed.filter { $0 >= start && $0 < start + 60 }.count <= 300, "seed \(seed), \(mode), window \(window)")
            }
            var tail = 0
            var most = 0
            for (head, time) in passed.enumerated() {
                while passed[tail] <= time - 60 { tail += 1 }
                most = max(most, head - tail + 1)
            }
            #expect(most <= 600, "seed \(seed), \(mode): \(most) passed within 60 s")
        }
    }

    /// Issue 56.2: just after a change of period the whole limit counts as
    /// spent, and it frees as the new period passes; a period on, the window is as before.
    @Test func aChangeOfPeriodStartsFromTheLimitSpent() {
        var changed = Self.policy
        changed.periodSeconds = 61
        changed.periodChangedAt = Int64(Self.epoch)
        let atChange = SlidingWindow(policy: changed, now: Self.epoch)
        #expect(atChange.room(current: 0, previous: 0) == 0)
        #expect(!atChange.verdict(current: 1, previous: 0).allowed)
        #expect(atChange.verdict(current: 0, previous: 0, allowed: false).retryAfterSeconds == 1)
        let halfway = SlidingWindow(policy: changed, now: Self.epoch + 30.5)
        #expect(halfway.room(current: 0, previous: 0) == 150)
        // What came since the change weighs in full, in the previous window too.
        #expect(halfway.room(current: 40, previous: 60) == 50)
        let later = SlidingWindow(policy: changed, now: Self.epoch + 61.5)
        #expect(later.limit == 300 && later.previousWeight < 1)

        // Counted: reservations every 0.1 s over the period after the change: about `limit` pass, never more.
        let times = (0..<610).map { Self.epoch + Double($0) / 10 }
        let passed = Self.passed(at: times, policy: changed, mode: .reserve)
        #expect(passed.count <= 300 && passed.count >= 290, "\(passed.count)")
    }
}
