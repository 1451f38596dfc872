import Foundation
import GatewayCore
import GatewayPluginKit
@testable import GatewayRuntime
import Testing

/// What `RateLimiter` decides for one request, over counters in memory
/// (``SharedCounters``, as PostgreSQL would hold them) and a clock the test
/// moves: which policies count, which reserve and give back, and what a
/// refusal says. Limits below the leasing threshold are counted exactly.
@Suite struct RateLimiterTests {
    static let start = 1_000_000.0 * 60

    static func app(_ limits: [String: RateLimitOverride]) -> AppSettings {
        AppSettings(
            appID: AppID(uuid: UUID()), name: "Limits", environment: .development, providerID: ProviderID(uuid: UUID()),
            credentialTypes: ["static"], rateLimits: limits)
    }

    static func limiter(_ counters: SharedCounters, clock: TestClock, enabled: Bool = true) -> RateLimiter {
        RateLimiter(ledger: counters, settings: RateLimitSettings(isEnabled: enabled), now: { clock.now })
    }

    /// An every-request policy counts refused requests too, refuses past its
    /// limit naming itself with a wait, and lets requests through again once
    /// its window has slid past them.
    @Test func everyRequestIsCountedAndARefusalNamesItsPolicyAndWait() async throws {
        let clock = TestClock(now: Self.start)
        let limiter = Self.limiter(SharedCounters(), clock: clock)
        let app = Self.app(["app": RateLimitOverride(limit: 3, periodSeconds: 60)])
        var allowed = 0
        var refusals: [LimitOutcome] = []
        for _ in 0..<5 {
            let outcome = try await limiter.check(["app": "*"], app: app, clientCounted: true)
            if outcome.refusal == nil { allowed += 1 } else { refusals.append(outcome) }
        }
        #expect(allowed == 3)
        #expect(refusals.count == 2)
        #expect(refusals.allSatisfy { $0.refusal?.policy.name == "app" })
        #expect(refusals.allSatisfy { ($0.refusal?.verdict.retryAfterSeconds ?? 0) > 0 })
        // Two windows on, nothing of the burst weighs any more.
        clock.now += 120
        #expect(try await limiter.check(["app": "*"], app: app, clientCounted: true).refusal == nil)
    }

    /// A failures policy reserves a unit before the credential is checked: a
    /// failed attempt keeps it, a verified one gives it back, so only
    /// failures add up to the limit.
    @Test func aFailuresPolicyKeepsTheUnitsOfFailuresAndGivesBackTheRest() async throws {
        let clock = TestClock(now: Self.start)
        let limiter = Self.limiter(SharedCounters(), clock: clock)
        let app = Self.app(["user_failures": RateLimitOverride(limit: 2, periodSeconds: 900)])
        // Ten verified attempts: each reserves and gives back.
        for _ in 0..<10 {
            let outcome = try await limiter.check(["user_failures": "ada"], app: app, clientCounted: true)
            #expect(outcome.refusal == nil)
            try await limiter.release(outcome)
        }
        // Two failures keep their units; the third attempt is refused before any check.
        for _ in 0..<2 {
            #expect(try await limiter.check(["user_failures": "ada"], app: app, clientCounted: true).refusal == nil)
        }
        let third = try await limiter.check(["user_failures": "ada"], app: app, clientCounted: true)
        #expect(third.refusal?.policy.name == "user_failures")
        // Another user's failures are counted apart.
        #expect(try await limiter.check(["user_failures": "grace"], app: app, clientCounted: true).refusal == nil)
    }

    /// A request one policy refuses gives back what the others reserved: a
    /// refusal never spends a user's failure budget.
    @Test func aRefusalGivesBackTheOtherPoliciesReservations() async throws {
        let clock = TestClock(now: Self.start)
        let limiter = Self.limiter(SharedCounters(), clock: clock)
        let app = Self.app([
            "app": RateLimitOverride(limit: 1, periodSeconds: 60),
            "user_failures": RateLimitOverride(limit: 1, periodSeconds: 900),
        ])
        let first = try await limiter.check(["app": "*", "user_failures": "ada"], app: app, clientCounted: true)
        #expect(first.refusal == nil)
        try await limiter.release(first)
        // The app's limit refuses the next three; none of them keeps ada's failure unit.
        for _ in 0..<3 {
            let refused = try await limiter.check(["app": "*", "user_failures": "ada"], app: app, clientCounted: true)
            #expect(refused.refusal?.policy.name == "app")
        }
        clock.now += 120
        let later = try await limiter.check(["app": "*", "user_failures": "ada"], app: app, clientCounted: true)
        #expect(later.refusal == nil, "ada's one failure unit is still free")
    }

    /// With limits off, nothing is counted and nothing refused.
    @Test func disabledLimitsCountNothing() async throws {
        let counters = SharedCounters()
        let limiter = Self.limiter(counters, clock: TestClock(now: Self.start), enabled: false)
        let app = Self.app(["app": RateLimitOverride(limit: 1, periodSeconds: 60)])
        for _ in 0..<5 {
            #expect(try await limiter.check(["app": "*"], app: app, clientCounted: true).refusal == nil)
        }
        #expect(try await limiter.countClient("203.0.113.9").refusal == nil)
        #expect(counters.touchesSent == 0)
    }
}
