import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// What the load script times before its scenarios, so each server's CPU a
/// token is set beside its own library's signature: `token-floor
/// --signing-rates` (the gateway's OpenSSL and swift-crypto signers) and
/// Benchmarks/load/signing_rate.py (the peer's `cryptography`), each on one
/// key, each answering signatures a second as JSON.
@Suite struct SigningRatesTests {

    /// A key file the tools read, removed by `body`'s end.
    static func withKeyFile(_ body: (URL) async throws -> Void) async throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "signing-key-\(UUID().uuidString).pem")
        defer { try? FileManager.default.removeItem(at: file) }
        try RSAKeyPair.generate(bits: 2048).privateKeyPEM.write(to: file, atomically: true, encoding: .utf8)
        try await body(file)
    }

    @Test func theFloorTimesBothOfTheGatewaysSigners() async throws {
        let floor = URL(fileURLWithPath: try SuiteEnvironment.value("GATEWAY_TEST_BINARY")).deletingLastPathComponent()
            .appending(path: "token-floor")
        try await Self.withKeyFile { key in
            var environment = ProcessInfo.processInfo.environment
            environment["FLOOR_KEY_FILE"] = key.path
            let run = try await GatewayProcess.runProgram(floor.path, ["--signing-rates", "0.2"], environment: environment)
            #expect(run.status == 0, "\(run.output)")
            let rates = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Double]
            #expect(Set(rates?.keys.map { $0 } ?? []) == ["openssl", "swift_crypto"], "\(run.output)")
            for (signer, rate) in rates ?? [:] { #expect(rate > 0, "\(signer)") }
        }
    }

    @Test func thePeersLibraryIsTimedWithTheSameKey() async throws {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        try await Self.withKeyFile { key in
            let run = try await GatewayProcess.runProgram(
                python, [Repository.path("Benchmarks/load/signing_rate.py"), key.path, "0.2"],
                environment: ProcessInfo.processInfo.environment)
            #expect(run.status == 0, "\(run.output)")
            let answer = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            #expect((answer?["cryptography"] as? Double ?? 0) > 0, "\(run.output)")
            #expect((answer?["openssl_version"] as? String)?.hasPrefix("OpenSSL ") == true, "\(run.output)")
        }
    }
}
