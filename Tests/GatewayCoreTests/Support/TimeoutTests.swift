import Synchronization
import Testing

import GatewayCore

/// `withTimeout`, which bounds every database step and outbound call: the
/// operation's answer, or `TimeoutError` at its deadline even from an
/// operation that ignores cancellation, which is then cancelled. Calls that
/// answer get a minute: under the whole suite a task may wait a while for
/// the pool, and only the held ones' short deadlines are meant to pass.
@Suite struct TimeoutTests {
    /// An operation held until the test lets it go, whatever cancellation says.
    final class Held: Sendable {
        private let state = Mutex<(released: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        private let cancelled = Atomic<Int>(0)

        func wait() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.released { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
            if Task.isCancelled { cancelled.add(1, ordering: .relaxed) }
        }

        func release() {
            let waiting = state.withLock { state in
                state.released = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        /// Whether an operation let go was told it had been cancelled, within a minute.
        func sawCancellation() async -> Bool {
            await within { self.cancelled.load(ordering: .relaxed) > 0 }
        }

        /// Whether an operation is waiting here, within a minute.
        func sawAWaiter() async -> Bool {
            await within { self.state.withLock { !$0.waiting.isEmpty } }
        }

        private func within(_ condition: () -> Bool) async -> Bool {
            let clock = ContinuousClock()
            let end = clock.now + .seconds(60)
            while !condition() {
                guard clock.now < end else { return false }
                await Task.yield()
            }
            return true
        }
    }

    @Test func anOperationThatEndsInTimeIsAnsweredWithItsResult() async throws {
        #expect(try await withTimeout(.seconds(60)) { 42 } == 42)
    }

    @Test func anOperationThatOutlivesItsTimeoutIsAnsweredOnTimeAndCancelled() async throws {
        let held = Held()
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(50)) {
                await held.wait()
                return 1
            }
        }
        #expect(clock.now - started >= .milliseconds(50), "not before its deadline")
        held.release()
        #expect(await held.sawCancellation(), "the operation was left to finish on its own, told it was cancelled")
    }

    /// A deadline that comes later than another but passes sooner does not wait for it.
    @Test func aShorterDeadlineAfterALongerOneIsAnsweredAtItsOwn() async throws {
        let long = Held()
        let clock = ContinuousClock()
        async let longAnswer = withTimeout(.seconds(60)) {
            await long.wait()
            return "long"
        }
        let started = clock.now
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(30)) {
                await Held().wait()
            }
        }
        #expect(clock.now - started < .seconds(30), "the short deadline waited for the long one")
        long.release()
        #expect(try await longAnswer == "long")
    }

    /// Many operations at once, some answered, some held past deadlines of
    /// different lengths: each gets its own answer, none another's.
    @Test func manyOperationsAtOnceEachGetTheirOwnAnswer() async throws {
        let held = Held()
        // A held call's deadline by its index; every call that answers gets a minute.
        let heldTimeouts: [Duration] = [.milliseconds(20), .milliseconds(60), .seconds(60)]
        enum Answer: Equatable { case value(Int), timedOut }
        let answers = try await withThrowingTaskGroup(of: (Int, Answer).self) { group in
            for index in 0..<300 {
                group.addTask {
                    do {
                        let value = try await withTimeout(index % 2 == 1 ? heldTimeouts[index % 3] : .seconds(60)) {
                            if index % 2 == 1 { await held.wait() }
                            return index
                        }
                        return (index, .value(value))
                    } catch is TimeoutError {
                        return (index, .timedOut)
                    }
                }
            }
            var answers: [Int: Answer] = [:]
            for try await (index, answer) in group {
                answers[index] = answer
                // Once every short-deadline held operation has timed out, let the long ones go.
                let shortHeld = answers.filter { $0.key % 2 == 1 && $0.key % 3 != 2 }.count
                if shortHeld == 100 { held.release() }
            }
            return answers
        }
        #expect(answers.count == 300)
        for (index, answer) in answers {
            let expected: Answer = index % 2 == 1 && index % 3 != 2 ? .timedOut : .value(index)
            #expect(answer == expected, "operation \(index)")
        }
    }

    @Test func aCancelledCallerIsAnsweredAtOnce() async throws {
        let held = Held()
        let caller = Task {
            try await withTimeout(.seconds(60)) {
                await held.wait()
                return 1
            }
        }
        #expect(await held.sawAWaiter())
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        held.release()
        #expect(await held.sawCancellation(), "its operation was cancelled with it")
    }
}
