import Foundation
import GatewayCore
import GatewayTestSupport
import PostgresNIO
import Testing

/// Every token profile judged by its vendor's own library:
/// `Tests/Vendors/token_profiles_test.py` (Authlib as an OpenID relying
/// party, firebase-admin and google-auth, stream-chat and PyJWT, twilio)
/// against a gateway process over a fresh database. The script also checks
/// that profile secrets never come back, that an app's admin cannot reach
/// another app's profiles, the refusals, the issued rows and Layer's answer
/// byte for byte.
@Suite struct TokenProfileVendorTests {
    @Test func eachProfilesTokenIsAcceptedByTheVendorsLibrary() async throws {
        let environment = ProcessInfo.processInfo.environment
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            // The public name relying parties know the gateway by; the script reaches it at the port it got
            // (as DNS would point the name at it), so no port is chosen before the start.
            var serve = serveEnvironment(url, bootstrap: bootstrap)
            serve["GATEWAY_OIDC_ISSUER_BASE_URL"] = Self.issuerBaseURL + "/"
            let server = try await GatewayProcess.start(["serve"], environment: serve)
            let run = try await GatewayProcess.runProgram(
                python,
                [
                    root.appending(path: "Tests/Vendors/token_profiles_test.py").path, "http://127.0.0.1:\(server.port)", bootstrap,
                    Self.issuerBaseURL,
                ],
                environment: ["PATH": environment["PATH"] ?? "/usr/bin:/bin", "HOME": environment["HOME"] ?? "/tmp"])
            #expect(run.status == 0, "vendor suite (exit \(run.status)):\n\(run.output)")
            #expect(run.output.contains("every profile held"), "\(run.output)")
            for secret in ["s3cr3t-stream-api-secret", "twilio-api-key-secret", "PRIVATE KEY"] {
                #expect(!server.printed.contains(secret), "a profile secret reached the log: \(secret)")
            }
            #expect(await server.stop() == 0)
        }
    }

    /// An app listing `oidc` on a deployment without `oidc.issuer_base_url`:
    /// production refuses to start with a line naming the setting;
    /// development starts and says so.
    @Test func productionDoesNotStartWhileAnAppListsAProfileItCannotMint() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            var environment = [
                "GATEWAY_DATABASE_URL": url, "GATEWAY_MASTER_KEY": MasterKey.generateBase64(), "GATEWAY_HTTP_PORT": "0",
                "GATEWAY_METRICS_PORT": "0", "GATEWAY_MIGRATE_ON_START": "true",
            ]
            #expect(try await GatewayProcess.run(["migrate"], environment: environment).status == 0)
            try await client.query(
                """
                INSERT INTO apps (app_id, name, environment, provider_id, credential_types, token_profiles)
                VALUES (gen_random_uuid(), 'issuer', 'production', gen_random_uuid(), '{password}',
                        '[{"type": "layer"}, {"type": "oidc", "audiences": ["api"]}]')
                """)
            let refused = try await GatewayProcess.run(["serve"], environment: environment)
            #expect(refused.status != 0)
            #expect(
                refused.messages.contains("1 app(s) issue oidc tokens, but oidc.issuer_base_url (GATEWAY_OIDC_ISSUER_BASE_URL)"),
                "\(refused.output)")
            environment["GATEWAY_MODE"] = "development"
            // One listener, the main one, which starts after the check (a metrics port would start before it).
            environment["GATEWAY_METRICS_PORT"] = nil
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            #expect(server.printed.contains("a token profile cannot be minted"))
            #expect(await server.stop() == 0)
        }
    }

    static let issuerBaseURL = "https://id.gateway.test"
}
