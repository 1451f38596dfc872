import Dispatch
import Foundation
@testable import GatewayHTTP
import Synchronization
import Testing

/// Signatures run on threads of their own: each caller gets its own answer,
/// and the cooperative pool stays free while every signer is busy.
@Suite struct SigningThreadsTests {
    struct Refused: Error, Equatable {}

    /// Set by the hang guard when it had to let the signers go.
    final class HangGuard: Sendable {
        let fired = Atomic(false)
    }

    /// The calling thread's name as the kernel has it (what `top -H` shows).
    static func currentThreadName() -> String {
        #if os(Linux)
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .newlines)
        #else
        return Thread.current.name ?? ""
        #endif
    }

    @Test func workRunsOnASigningThreadAndItsResultOrErrorComesBack() async throws {
        let signers = SigningThreads(threads: 2)
        let name = try await signers.run { Self.currentThreadName() }
        #expect(name.hasPrefix("token-signer-"))
        await #expect(throws: Refused.self) { try await signers.run { throw Refused() } }
    }

    @Test func manyCallersAtOnceEachGetTheirOwnAnswer() async throws {
        let signers = SigningThreads(threads: 2)
        let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for caller in 0..<500 {
                group.addTask { (caller, try await signers.run { caller * caller }) }
            }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(answers.count == 500)
        #expect(answers.allSatisfy { $0.value == $0.key * $0.key })
    }

    @Test func theCooperativePoolRunsWhileEverySignerIsBusy() async throws {
        let threads = 2
        let signers = SigningThreads(threads: threads)
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let hangGuard = HangGuard()
        // Only against a hang should the pool be blocked after all: this lets the signers go after 30 s.
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) {
            hangGuard.fired.store(true, ordering: .relaxed)
            for _ in 0..<threads { release.signal() }
        }
        let busy = (0..<threads).map { _ in
            Task { try await signers.run { started.signal(); release.wait() } }
        }
        for _ in 0..<threads { await withCheckedContinuation { c in DispatchQueue.global().async { started.wait(); c.resume() } } }

        // Every signer is blocked now; tasks on the cooperative pool still run.
        let sum = await withTaskGroup(of: Int.self) { group in
            for value in 1...100 { group.addTask { value } }
            return await group.reduce(0, +)
        }
        #expect(sum == 5050)
        let guardFired = hangGuard.fired.load(ordering: .relaxed)
        #expect(!guardFired, "the pool waited for the signers")
        for _ in 0..<threads { release.signal() }
        for task in busy { try await task.value }
    }
}
