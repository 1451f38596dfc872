import Foundation
import GatewayBenchmarkWorkloads
import Testing

/// Benchmarks/micro times these steps; here each runs once, so the
/// benchmarks compile and work with every change (they once rotted unseen).
@Suite struct BenchmarkWorkloadTests {
    @Test func everyWorkloadRunsOnce() async throws {
        // A key generated and two argon2 hashes: on a dispatch thread, not the tests' cooperative pool (nor a
        // Foundation `Thread` that ends: see `detachThread` in GatewayTestSupport).
        let outcomes = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try TokenPathWorkloads.all().map { workload in (workload.name, Result { try workload.run() }) }
                    })
            }
        }
        #expect(outcomes.count == 6)
        #expect(Set(outcomes.map(\.0)).count == outcomes.count, "each benchmark is named once")
        for (name, outcome) in outcomes {
            if case .failure(let error) = outcome { Issue.record("\(name): \(error)") }
        }
    }
}
