import Foundation
import GatewayOutbound
import Synchronization
import Testing

@Suite struct CircuitBreakerTests {
    final class Clock: Sendable {
        private let time = Mutex(Date(timeIntervalSince1970: 0))
        var now: Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 += seconds } }
    }

    let settings = CircuitBreaker<String>.Settings(failures: 3, coolDown: .seconds(10))

    @Test func opensAfterFailuresInARowAndOnlyThen() {
        let clock = Clock()
        let changes = Mutex<[Bool]>([])
        let breaker = CircuitBreaker<String>(now: { clock.now }, onChange: { _, open in changes.withLock { $0.append(open) } })
        breaker.recordFailure("a", settings)
        breaker.recordFailure("a", settings)
        breaker.recordSuccess("a")
        breaker.recordFailure("a", settings)
        breaker.recordFailure("a", settings)
        #expect(breaker.permits("a"))
        breaker.recordFailure("a", settings)
        #expect(!breaker.permits("a"))
        #expect(breaker.permits("b"))
        #expect(changes.withLock { $0 } == [true])
    }

    /// After the cool-down exactly one trial goes out, however many ask at once.
    @Test func oneTrialAfterTheCoolDownDecides() async {
        let clock = Clock()
        let changes = Mutex<[Bool]>([])
        let breaker = CircuitBreaker<String>(now: { clock.now }, onChange: { _, open in changes.withLock { $0.append(open) } })
        for _ in 1...3 { breaker.recordFailure("a", settings) }
        clock.advance(9)
        #expect(!breaker.permits("a"))
        clock.advance(1)
        let permitted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 { group.addTask { breaker.permits("a") } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(permitted == 1)
        // The trial failed: open for another cool-down.
        breaker.recordFailure("a", settings)
        clock.advance(9)
        #expect(!breaker.permits("a"))
        clock.advance(1)
        #expect(breaker.permits("a"))
        breaker.recordSuccess("a")
        #expect(!breaker.isOpen("a"))
        #expect(breaker.permits("a") && breaker.permits("a"))
        #expect(changes.withLock { $0 } == [true, false])
    }

    /// A trial whose result never comes (its request was cancelled) frees the next one a cool-down later.
    @Test func aLostTrialDoesNotKeepTheBreakerOpenForever() {
        let clock = Clock()
        let breaker = CircuitBreaker<String>(now: { clock.now })
        for _ in 1...3 { breaker.recordFailure("a", settings) }
        clock.advance(10)
        #expect(breaker.permits("a"))
        #expect(!breaker.permits("a"))
        clock.advance(10)
        #expect(breaker.permits("a"))
    }
}
