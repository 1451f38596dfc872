import GatewayCore
import Testing

/// The one retry schedule: first, doubling, capped; constant when asked.
@Suite struct BackoffTests {
    @Test func itDoublesFromTheFirstPauseUpToTheLongest() {
        let backoff = Backoff(first: .seconds(2), longest: .seconds(60))
        #expect((1...7).map { backoff.pause(beforeRetry: $0) } == [2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        #expect(backoff.pause(beforeRetry: 0) == .seconds(2))
        #expect(backoff.pause(beforeRetry: 1_000_000) == .seconds(60), "no doubling overflows")
        #expect(Backoff.database.pause(beforeRetry: 1) == .milliseconds(50))
        #expect(Backoff.database.pause(beforeRetry: 5) == .milliseconds(500))
        #expect(Backoff.constant(.milliseconds(200)).pause(beforeRetry: 9) == .milliseconds(200))
    }
}
