import Foundation
import GatewayCore
import GatewayPluginKit
@testable import GatewayRuntime
import Synchronization
import Testing

/// `RateLimiter.admit`'s `onCountsAllowed`: called before the row's
/// statement only where every policy that counts requests allowed this one
/// from the replica's blocks, so a token's signature begins beside its
/// statement for those, and no request such a policy refuses paid for one.
@Suite struct CountsAllowedTests {
    static let event = AuditEvent(appID: CounterLeaseTests.app, event: "token.issued", outcome: .success, requestID: "test")

    /// One admission: whether its counts allowed it before its statement, and whether the limits refused it.
    struct Admitted: Sendable, Equatable {
        let sure: Bool
        let refused: Bool
    }

    static func admit(_ replica: RateLimiter, app: AppSettings, user: String? = nil) async throws -> Admitted {
        let sure = Mutex(false)
        var subjects = ["app": "*"]
        if let user { subjects[RateLimitPolicy.userFailures.name] = user }
        let recording = try await replica.admit(
            subjects, app: app, clientCounted: true, recording: event, onCountsAllowed: { sure.withLock { $0 = true } })
        return Admitted(sure: sure.withLock { $0 }, refused: recording.limits.refusal != nil)
    }

    @Test func aRequestServedFromABlockIsSureAndOneThatAsksForABlockIsNot() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = CounterLeaseTests.replica(counters, clock: clock)
        let app = CounterLeaseTests.settings(appLimit: 64_000)
        var sure = 0
        for _ in 0..<2_000 {
            let admitted = try await Self.admit(replica, app: app)
            #expect(!admitted.refused)
            if admitted.sure { sure += 1 }
        }
        // Six blocks (62, 124, 248, 496, 992, 1 000): the six requests that asked for one waited on its answer.
        #expect(counters.unitsAskedFor.count == 6)
        #expect(sure == 2_000 - 6)
    }

    @Test func aLimitCountedExactlyIsNeverSureInAdvance() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = CounterLeaseTests.replica(counters, clock: clock)
        // Below the lease minimum: every request is one touch of the shared counter, which may refuse it.
        let app = CounterLeaseTests.settings(appLimit: 999)
        var (sure, refused) = (0, 0)
        for _ in 0..<1_200 {
            let admitted = try await Self.admit(replica, app: app)
            if admitted.sure { sure += 1 }
            if admitted.refused { refused += 1 }
        }
        #expect(refused == 201)
        #expect(sure == 0)
    }

    /// The attack: many requests at once over two replicas, past a leased
    /// limit. None that the limits refused was sure beforehand, and no more
    /// were sure than the limit let through.
    @Test func pastALeasedLimitNoRefusedRequestWasSure() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replicas = [CounterLeaseTests.replica(counters, clock: clock), CounterLeaseTests.replica(counters, clock: clock)]
        let app = CounterLeaseTests.settings(appLimit: 2_000)
        let results = try await withThrowingTaskGroup(of: [Admitted].self) { group in
            for worker in 0..<16 {
                group.addTask {
                    var results: [Admitted] = []
                    for _ in 0..<200 { results.append(try await Self.admit(replicas[worker % 2], app: app)) }
                    return results
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let allowed = results.filter { !$0.refused }.count
        #expect(results.count == 3_200)
        #expect(allowed <= 2_000)
        #expect(allowed >= 2_000 - 2 * 31 - 2, "\(allowed) let through")
        #expect(results.filter { $0.sure && $0.refused }.count == 0, "refused requests sure before their statement")
        let sure = results.filter(\.sure).count
        #expect(sure >= 1_000, "\(sure) of \(allowed) admissions sure beforehand: the blocks served few")
    }

    /// A user's failures are only read by a verified request's statement:
    /// a request its counts allowed is signed beside it, and dropped if the
    /// user is over their failures. It spent a unit of the replica's `app`
    /// block all the same, so it costs no more than an admitted request.
    @Test func aReadOfTheUsersFailuresLeavesTheRequestSureAndCounted() async throws {
        let counters = SharedCounters()
        let clock = TestClock(now: 1_000_000)
        let replica = CounterLeaseTests.replica(counters, clock: clock)
        let app = CounterLeaseTests.settings(appLimit: 64_000)
        // The app's block first (the request that asks for it waits on its answer).
        #expect(try await !Self.admit(replica, app: app, user: "alice").sure)
        #expect(try await Self.admit(replica, app: app, user: "alice") == Admitted(sure: true, refused: false))
        for _ in 0..<RateLimitPolicy.userFailures.limit {
            _ = try await replica.countFailure(ofUser: "alice", app: app)
        }
        let locked = try await Self.admit(replica, app: app, user: "alice")
        #expect(locked == Admitted(sure: true, refused: true))
        #expect(try await Self.admit(replica, app: app, user: "bob") == Admitted(sure: true, refused: false))
    }

    @Test func withRateLimitingOffEveryAdmissionIsSure() async throws {
        let counters = SharedCounters()
        let replica = RateLimiter(ledger: counters, settings: RateLimitSettings(isEnabled: false), leases: CounterLeases())
        let admitted = try await Self.admit(replica, app: CounterLeaseTests.settings(appLimit: 1))
        #expect(admitted.sure && !admitted.refused)
        #expect(counters.touchesSent == 0)
    }
}
