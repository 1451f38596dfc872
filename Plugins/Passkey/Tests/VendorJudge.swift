import Foundation
import GatewayTestSupport
import Testing

/// The cases a judge in Tests/Vendors prints (a JSON list), run with the
/// vendor libraries' Python (`./scripts/test` installs it).
enum VendorJudge {
    static func cases(_ script: String, _ arguments: [String] = []) async throws -> [[String: Any]] {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let run = try await GatewayProcess.runProgram(
            python, [root.appending(path: "Tests/Vendors/\(script)").path] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()])
        #expect(run.status == 0, "\(script): \(run.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [[String: Any]])
    }
}
