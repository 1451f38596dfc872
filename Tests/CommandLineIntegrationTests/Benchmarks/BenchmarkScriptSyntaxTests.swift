import Foundation
import GatewayTestSupport
import Testing

/// The benchmark scripts run only by hand (the load script, the failover
/// drill, and what they source): each must still parse, so an edit that
/// breaks one fails here instead of at its next measurement.
@Suite struct BenchmarkScriptSyntaxTests {

    @Test(arguments: ["Benchmarks/load/run", "Benchmarks/load/instructions.sh", "Benchmarks/load/password-memory", "Benchmarks/ha/run"])
    func parses(script: String) async throws {
        let run = try await GatewayProcess.runProgram(
            "/bin/bash", ["-n", Repository.path(script)], environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(script): \(run.output)")
    }
}
