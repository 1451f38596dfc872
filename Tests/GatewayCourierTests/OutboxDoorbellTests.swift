import GatewayCore
import Testing

@testable import GatewayCourier

/// The bell wakes every worker that waits on it: two gateways in one
/// process share a plugin's bell, and a second waiter once took the first's
/// place, which then never woke and held its gateway's shutdown forever.
@Suite struct OutboxDoorbellTests {
    @Test func aRingWakesEveryWaiterLongBeforeItsTimeout() async {
        let bell = OutboxDoorbell()
        let started = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { await bell.wait(upTo: .seconds(600)) } }
            // Rings until every waiter has woken: a ring before a waiter waits is kept for it.
            group.addTask {
                while !Task.isCancelled {
                    bell.ring()
                    await Task.yield()
                }
            }
            for _ in 0..<8 { await group.next() }
            group.cancelAll()
        }
        #expect(ContinuousClock.now - started < .seconds(600))
    }

    @Test func aRingBeforeTheWaitIsKeptForIt() async {
        let bell = OutboxDoorbell()
        bell.ring()
        let started = ContinuousClock.now
        await bell.wait(upTo: .seconds(600))
        #expect(ContinuousClock.now - started < .seconds(600))
    }

    @Test func aWaitThatIsCancelledReturns() async {
        let bell = OutboxDoorbell()
        let waiter = Task { await bell.wait(upTo: .seconds(600)) }
        waiter.cancel()
        await waiter.value
    }

    @Test func aTransientFailureWaitsLongerEachTimeAndTheLastIsFinal() {
        var settings = OutboxWorker.Settings()
        settings.backoff = Backoff(first: .seconds(2), longest: .seconds(60))
        settings.maximumAttempts = 8
        let pauses = (1...7).map { OutboxWorker.finish(after: .transient(reply: "451"), attempt: $0, settings: settings) }
        #expect(pauses == [2, 4, 8, 16, 32, 60, 60].map { .retry(after: .seconds($0), reply: "451") })
        #expect(OutboxWorker.finish(after: .transient(reply: "451"), attempt: 8, settings: settings) == .failed(reply: "451"))
        #expect(OutboxWorker.finish(after: .permanent(reply: "550"), attempt: 1, settings: settings) == .failed(reply: "550"))
    }
}
