import GatewayCore
import GatewayRuntime
import Synchronization
import Testing

/// The in-memory per-address limit: exact at any concurrency within a
/// replica, one budget per IPv6 /64, and a sliding window across edges.
@Suite struct ClientThrottleTests {
    final class Clock: Sendable {
        let time = Mutex<Double>(1_800_000_000)
        var now: Double { time.withLock { $0 } }
    }

    static let policy = RateLimitPolicy(name: "test_ip", limit: 5, periodSeconds: 60, counting: .everyRequest, countsClientAddress: true)

    @Test func exactlyTheLimitPassesWhateverTheConcurrency() async {
        let throttle = ClientThrottle(policy: Self.policy, settings: RateLimitSettings())
        let passed = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 { group.addTask { (try? throttle.take("203.0.113.9")) != nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(passed == 5)
        // Another address has its own budget; one IPv6 /64 shares one.
        #expect((try? throttle.take("203.0.113.10")) != nil)
        for host in 1...5 { #expect((try? throttle.take("2001:db8:1:2::\(host)")) != nil) }
        let refused = #expect(throws: GatewayError.self) { try throttle.take("2001:db8:1:2:ffff::1") }
        #expect(refused?.code == .rateLimited)
        #expect((refused?.retryAfterSeconds ?? 0) >= 1)
    }

    @Test func aGivenBackUnitMakesRoomAndTheWindowSlides() {
        let clock = Clock()
        let throttle = ClientThrottle(policy: Self.policy, settings: RateLimitSettings(), now: { clock.now })
        var units: [ClientThrottle.Unit?] = []
        for _ in 0..<5 { units.append(try? throttle.take("198.51.100.1")) }
        #expect(throws: GatewayError.self) { try throttle.take("198.51.100.1") }
        throttle.giveBack(units[0])
        #expect((try? throttle.take("198.51.100.1")) != nil)
        // Half into the next window the previous five weigh two and a half: two more fit.
        clock.time.withLock { $0 = ($0 / 60).rounded(.down) * 60 + 60 + 30 }
        #expect((try? throttle.take("198.51.100.1")) != nil)
        #expect((try? throttle.take("198.51.100.1")) != nil)
        #expect(throws: GatewayError.self) { try throttle.take("198.51.100.1") }
    }

    /// Units taken just before a window's edge and given back just after
    /// (good admin tokens whose lookup straddled it) leave the window they
    /// were counted in: the address keeps its whole budget.
    @Test func aUnitGivenBackAcrossTheEdgeLeavesTheWindowItWasTakenIn() {
        let clock = Clock()
        clock.time.withLock { $0 = ($0 / 60).rounded(.down) * 60 + 59 }
        let throttle = ClientThrottle(policy: Self.policy, settings: RateLimitSettings(), now: { clock.now })
        var units: [ClientThrottle.Unit?] = []
        for _ in 0..<5 { units.append(try? throttle.take("198.51.100.2")) }
        clock.time.withLock { $0 += 2 }
        for unit in units { throttle.giveBack(unit) }
        for _ in 0..<5 { #expect((try? throttle.take("198.51.100.2")) != nil) }
        #expect(throws: GatewayError.self) { try throttle.take("198.51.100.2") }
    }

    @Test func offWhenRateLimitsAreOff() {
        let throttle = ClientThrottle(policy: Self.policy, settings: RateLimitSettings(isEnabled: false))
        for _ in 0..<50 { #expect(throws: Never.self) { try throttle.take("192.0.2.1") } }
    }
}
