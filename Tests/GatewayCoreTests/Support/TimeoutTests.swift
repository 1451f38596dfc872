@testable import GatewayCore
import Synchronization
import Testing

/// `withTimeout` answers its caller at the deadline even when the operation
/// ignores cancellation, and one ``DeadlineWatch`` keeps every deadline.
/// Each test has a watch of its own, so the suite's tests can run together.
@Suite struct TimeoutTests {
    @Test func anOperationThatFinishesFirstIsAnsweredAndLeavesNoDeadline() async throws {
        let watch = DeadlineWatch()
        #expect(try await withTimeout(.seconds(60), watchedBy: watch) { 42 } == 42)
        await #expect(throws: Refused.self) {
            try await withTimeout(.seconds(60), watchedBy: watch) { () async throws -> Int in throw Refused() }
        }
        #expect(watch.count == 0)
    }

    @Test func anOperationThatIgnoresCancellationIsAnsweredAtItsDeadline() async throws {
        let watch = DeadlineWatch()
        let gate = Gate()
        let started = ContinuousClock.now
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(200), watchedBy: watch) { await gate.wait() }
        }
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        #expect(watch.count == 0)
        gate.open()
    }

    /// The watcher sleeps toward the first deadline, ten minutes away; a
    /// shorter timeout added after it must still be answered on time.
    @Test func aLaterShorterTimeoutCutsTheWatchersSleepShort() async throws {
        let watch = DeadlineWatch()
        let gate = Gate()
        let long = await tenMinuteCall(watchedBy: watch, until: gate)
        // Without the cut, the call would wait ten minutes.
        let short = await outcome(within: .seconds(30)) {
            await Result(catching: { try await withTimeout(.milliseconds(100), watchedBy: watch) { await gate.wait() } })
        }
        #expect(throws: TimeoutError.self) { try #require(short).get() }
        long.cancel()
        await #expect(throws: CancellationError.self) { try await long.value }
        #expect(watch.count == 0)
        gate.open()
    }

    @Test func cancellingTheCallerAnswersItAtOnce() async throws {
        let watch = DeadlineWatch()
        let gate = Gate()
        let call = await tenMinuteCall(watchedBy: watch, until: gate)
        call.cancel()
        let answer = await outcome(within: .seconds(30)) { await call.result }
        #expect(throws: CancellationError.self) { try #require(answer).get() }
        #expect(watch.count == 0)
        gate.open()
    }

    /// 600 calls at once: a third answer, a third fail, a third hang past
    /// deadlines spread over 20–120 ms. Each is answered once, as itself.
    /// The calls that answer or fail have a minute: on a busy machine their
    /// tasks may wait longer than 120 ms for a thread (seen in CI).
    @Test func everyCallIsAnsweredOnceAndAsItself() async throws {
        let watch = DeadlineWatch()
        let gate = Gate()
        let outcomes = await outcome(within: .seconds(30)) {
            await withTaskGroup(of: String.self) { group in
            for index in 0..<600 {
                group.addTask {
                    do {
                        let timeout: Duration = index % 3 == 2 ? .milliseconds(20 + index % 100) : .seconds(60)
                        let value = try await withTimeout(timeout, watchedBy: watch) {
                            () async throws -> Int in
                            switch index % 3 {
                            case 0: return index
                            case 1: throw Refused()
                            default:
                                await gate.wait()
                                return -1
                            }
                        }
                        return value == index ? "answered" : "wrong answer"
                    } catch is Refused {
                        return index % 3 == 1 ? "refused" : "wrong refusal"
                    } catch is TimeoutError {
                        return index % 3 == 2 ? "timed out" : "wrong timeout"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            var outcomes: [String: Int] = [:]
            for await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        }
        #expect(outcomes == ["answered": 200, "refused": 200, "timed out": 200])
        #expect(watch.count == 0)
        gate.open()
    }

    /// Every deadline expires once, never before its instant, and a removed one never does.
    @Test func deadlinesExpireOnceAtOrAfterTheirInstantsUnlessRemoved() async throws {
        let watch = DeadlineWatch()
        let (expiries, expired) = AsyncStream.makeStream(of: (Int, ContinuousClock.Instant).self)
        let removedExpired = Mutex(false)
        let start = ContinuousClock.now
        let removed = watch.add(start.advanced(by: .milliseconds(5))) { removedExpired.withLock { $0 = true } }
        watch.remove(removed)
        var instants: [Int: ContinuousClock.Instant] = [:]
        for index in 0..<100 {
            let instant = start.advanced(by: .milliseconds((index * 37) % 60 + 10))
            instants[index] = instant
            _ = watch.add(instant) { expired.yield((index, ContinuousClock.now)) }
        }
        let seen = await outcome(within: .seconds(30)) { () -> [Int: ContinuousClock.Instant] in
            var seen: [Int: ContinuousClock.Instant] = [:]
            for await (index, at) in expiries {
                #expect(seen[index] == nil, "deadline \(index) expired twice")
                seen[index] = at
                if seen.count == 100 { break }
            }
            return seen
        } ?? [:]
        #expect(seen.count == 100)
        for (index, at) in seen { #expect(at >= instants[index]!, "deadline \(index) expired early") }
        #expect(!removedExpired.withLock { $0 })
        #expect(watch.count == 0)
    }

    /// The watcher ends as it expires the last deadline (in the same step),
    /// and the next deadline starts it again: at rest, nothing runs.
    @Test func theWatcherEndsWithNothingToWatchAndStartsAgain() async throws {
        let watch = DeadlineWatch()
        #expect(!watch.isWatching)
        for round in 0..<3 {
            let (expiries, expired) = AsyncStream.makeStream(of: Void.self)
            _ = watch.add(.now) { expired.yield() }
            let expiry: Void? = await outcome(within: .seconds(30)) { for await _ in expiries { return () } }
            #expect(expiry != nil, "round \(round): the deadline did not expire")
            #expect(!watch.isWatching, "round \(round)")
        }
    }
}

private struct Refused: Error {}

/// What `body` returns, or nil once `limit` has passed, so that a broken
/// watch fails its test instead of stalling the suite. `Task.sleep` keeps
/// this limit, not a watch.
private func outcome<T: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async -> T) async -> T? {
    let (results, result) = AsyncStream.makeStream(of: T.self)
    Task { result.yield(await body()) }
    return await withTaskGroup(of: T?.self) { group in
        group.addTask {
            for await value in results { return value }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// A call with ten minutes to run whose operation waits for `gate`, once its operation has started.
private func tenMinuteCall(watchedBy watch: DeadlineWatch, until gate: Gate) async -> Task<Void, any Error> {
    let (operationStarted, started) = AsyncStream.makeStream(of: Void.self)
    let call = Task {
        try await withTimeout(.seconds(600), watchedBy: watch) {
            started.yield()
            await gate.wait()
        }
    }
    for await _ in operationStarted { break }
    return call
}

/// Holds its waiters, whatever their cancellation, until opened.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let openNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if openNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
