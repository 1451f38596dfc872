import Foundation
import GatewayTestSupport
import Testing

/// The benchmark scripts run only by hand (the load script, the failover
/// drill, and what they source): each must still parse, so an edit that
/// breaks one fails here instead of at its next measurement.
@Suite struct BenchmarkScriptSyntaxTests {

    @Test(arguments: [
        "Benchmarks/load/run", "Benchmarks/load/instructions.sh", "Benchmarks/load/password-memory", "Benchmarks/ha/run",
        "Benchmarks/ha/upgrade", "Benchmarks/scale/run",
    ])
    func parses(script: String) async throws {
        let run = try await GatewayProcess.runProgram(
            "/bin/bash", ["-n", Repository.path(script)], environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(script): \(run.output)")
    }

    /// The load benchmark's and the drills' Python drivers and servers compile (the email scenario's and
    /// the upgrade drill's among them).
    @Test func theLoadDriversCompile() async throws {
        var scripts: [String] = []
        for folder in ["Benchmarks/load", "Benchmarks/ha", "Benchmarks/scale"] {
            scripts += try FileManager.default.contentsOfDirectory(atPath: Repository.path(folder)).filter { $0.hasSuffix(".py") }
                .sorted().map { "\(folder)/\($0)" }
        }
        #expect(scripts.contains("Benchmarks/load/email_sink.py") && scripts.contains("Benchmarks/ha/upgrade.py"))
        #expect(scripts.contains("Benchmarks/scale/admin_depth.py"))
        let run = try await GatewayProcess.runProgram(
            "/usr/bin/python3", ["-c", "import ast, sys; [ast.parse(open(p).read(), p) for p in sys.argv[1:]]"] + scripts.map(Repository.path),
            environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
    }
}
