import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import Testing

/// Batched counter touches read as if the requests had run one by one.
@Suite struct RateLimitRepositoryTests {
    @Test func concurrentTouchesOfOneCounterEachSeeTheirOwnCount() async throws {
        try await TestDatabase.with { client, _ in
            let counters = RateLimitRepository(client: client, logger: TestDatabase.logger)
            let policy = RateLimitPolicy(name: "ip", limit: 1000, periodSeconds: 60, counting: .everyRequest)
            let failures = RateLimitPolicy(name: "user_failures", limit: 5, periodSeconds: 60, counting: .failures)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await counters.run() }
                let seen = try await withThrowingTaskGroup(of: [RateLimitRepository.Counts].self) { touches in
                    for _ in 0..<60 {
                        touches.addTask {
                            try await counters.touch(
                                [
                                    .init(window: SlidingWindow(policy: policy, now: now), subject: "10.0.0.1", increment: 1),
                                    .init(window: SlidingWindow(policy: failures, now: now), subject: "alice", increment: 0),
                                ], appID: appID)
                        }
                    }
                    return try await touches.reduce(into: []) { $0.append($1) }
                }
                // Every request saw a different count of the shared counter, 1 through 60.
                #expect(seen.map { $0[0].current }.sorted() == Array(1...60))
                // The read-only counter was never added to.
                #expect(seen.allSatisfy { $0[1].current == 0 })
                // Another app's counter is its own.
                let other = try await counters.touch(
                    [.init(window: SlidingWindow(policy: policy, now: now), subject: "10.0.0.1", increment: 1)],
                    appID: AppID(uuid: UUID()))
                #expect(other.map(\.current) == [1])
                group.cancelAll()
            }
        }
    }
}
