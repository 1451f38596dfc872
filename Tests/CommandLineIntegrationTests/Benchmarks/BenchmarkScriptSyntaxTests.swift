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

    /// The load benchmark's Python drivers and servers compile (the email scenario's among them).
    @Test func theLoadDriversCompile() async throws {
        let folder = Repository.path("Benchmarks/load")
        let scripts = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".py") }.sorted()
        #expect(scripts.contains("email_logins.py") && scripts.contains("email_sink.py"))
        let run = try await GatewayProcess.runProgram(
            "/usr/bin/python3", ["-c", "import ast, sys; [ast.parse(open(p).read(), p) for p in sys.argv[1:]]"] + scripts.map { "\(folder)/\($0)" },
            environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
    }
}
