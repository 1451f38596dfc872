import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import Testing
import WebhookPlugin

/// docs/plugins.md's way for a tenant to check the signature works on what the gateway really sends.
@Suite struct WebhookSignatureTests {
    /// The Python block after "to check it in the service" in docs/plugins.md.
    static func readmeVerifier() throws -> String {
        let readme = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../../docs/plugins.md").standardized
        let text = try String(contentsOf: readme, encoding: .utf8)
        let anchor = try #require(text.range(of: "to check it in the service"))
        let start = try #require(text.range(of: "```python\n", range: anchor.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "```", range: start.upperBound..<text.endIndex))
        return String(text[start.upperBound..<end.lowerBound])
    }

    @Test func theReadmesPythonVerifierAcceptsTheGatewaysSignatureAndNothingElse() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base)
                _ = try await gateway.webhookLogin(app, user: "valid-ada", password: "pässwörd \"quoted\" / \\")
                let sent = try #require(tenant.requests.first)
                let verifier = try Self.readmeVerifier()
                func verdict(secret: String, body: String) async throws -> String {
                    let folder = FileManager.default.temporaryDirectory.appending(path: "webhook-\(UUID())")
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    defer { try? FileManager.default.removeItem(at: folder) }
                    try Data(body.utf8).write(to: folder.appending(path: "body"))
                    let script = verifier + """

                        import sys
                        headers = {"X-Gateway-Timestamp": sys.argv[1], "X-Gateway-Signature": sys.argv[2]}
                        print(signed_by_gateway(sys.argv[3].encode(), headers, open(sys.argv[4], "rb").read()))
                        """
                    let exit = try await GatewayProcess.runProgram(
                        "/usr/bin/python3",
                        ["-c", script, sent.headers["x-gateway-timestamp"] ?? "", sent.headers["x-gateway-signature"] ?? "",
                         secret, folder.appending(path: "body").path],
                        environment: ProcessInfo.processInfo.environment)
                    return exit.output.trimmingCharacters(in: .whitespacesAndNewlines)
                }
                #expect(try await verdict(secret: tenantSecret, body: sent.body) == "True")
                #expect(try await verdict(secret: "another-secret-0123456789", body: sent.body) == "False")
                #expect(try await verdict(secret: tenantSecret, body: sent.body.replacingOccurrences(of: "valid-ada", with: "valid-eve")) == "False")
            }
        }
    }
}
