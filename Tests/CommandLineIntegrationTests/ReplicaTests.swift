import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// Two gateway processes on one database, as replicas behind a load balancer.
@Suite struct ReplicaTests {
    @Test func aChangeThroughOneReplicaReachesTheOtherLongBeforeItsReload() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = serveEnvironment(url, bootstrap: bootstrap)
            // Only NOTIFY can explain a change seen within a second.
            environment["GATEWAY_CACHE_RELOAD_SECONDS"] = "3600"
            // Both start (and migrate, and seed the bootstrap token) at once.
            async let startingA = GatewayProcess.start(["serve"], environment: environment)
            async let startingB = GatewayProcess.start(["serve"], environment: environment)
            let (a, b) = try await (startingA, startingB)
            let baseA = "http://127.0.0.1:\(a.port)"
            let baseB = "http://127.0.0.1:\(b.port)"

            let appID = UUID().lowercasedText
            let created = try await HTTPCall.send(
                "POST", "\(baseA)/admin/v1/apps", token: bootstrap,
                json: [
                    "app_id": appID, "name": "replicated", "environment": "development",
                    "provider_id": UUID().uuidString, "credential_types": ["static"],
                    "plugins": ["static": ["allow_any_user": true]],
                ])
            #expect(created.status == 201, "\(created.text)")

            // The operator's CLI imports the key through replica A's REST API.
            let keyFolder = FileManager.default.temporaryDirectory.appending(path: "key-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: keyFolder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: keyFolder) }
            let pem = try await TestKeys.opensslPEM(format: "pkcs1")
            try Data(pem.utf8).write(to: keyFolder.appending(path: "key.pem"))
            let imported = try await GatewayProcess.run(
                [
                    "admin", "import-key", "--url", baseA, "--token", bootstrap, "--app-id", "layer:///apps/staging/\(appID)",
                    "--key-id", UUID().uuidString, "--pem-file", keyFolder.appending(path: "key.pem").path,
                ])
            #expect(imported.status == 0, "\(imported.output)")
            #expect(imported.output.contains("\"status\":\"active\""))
            #expect(!imported.output.contains("PRIVATE"))

            let tokenRequest: [String: any Sendable] = ["app_id": appID, "user_id": "erin", "nonce": "n+1"]
            let first = try await HTTPCall.send("POST", "\(baseB)/v1/identity_tokens", json: tokenRequest)
            #expect(first.status == 200)  // B now holds the app in its cache

            let disabled = try await HTTPCall.send(
                "PATCH", "\(baseA)/admin/v1/apps/\(appID)", token: bootstrap, json: ["enabled": false])
            #expect(disabled.status == 200)
            let changedAt = ContinuousClock.now
            var seenByB = false
            // Alone this takes about 10 ms; the budget allows for a loaded CI
            // machine and is still far below the 60 s periodic reload.
            while ContinuousClock.now - changedAt < .seconds(5) {
                let answer = try await HTTPCall.send("POST", "\(baseB)/v1/identity_tokens", json: tokenRequest)
                if answer.status == 403 {
                    seenByB = true
                    print("replica B refused the disabled app \(ContinuousClock.now - changedAt) after the change")
                    break
                }
                try await Task.sleep(for: .milliseconds(10))  // polling B, which has no event to await from outside
            }
            if !seenByB {
                // What B knew of its listener then: its readiness (which follows the listener) and what it logged.
                let ready = try? await HTTPCall.send("GET", "\(baseB)/readyz", json: nil)
                Issue.record(
                    """
                    replica B still issued tokens 5 s after the app was disabled through A; \
                    B's /readyz: \(ready.map { "\($0.status) \($0.text)" } ?? "no answer"); B printed:
                    \(b.printed.suffix(8_000))
                    """)
            }

            #expect(await a.stop() == 0)
            #expect(await b.stop() == 0)
            // No secret in either replica's log.
            let pemBody = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? "missing"
            for log in [a.printed, b.printed] {
                #expect(!log.contains(pemBody))
                #expect(!log.contains(bootstrap))
                #expect(!log.contains("PRIVATE KEY"))
            }
        }
    }

    @Test func theAdminCommandsDriveTheRestAPI() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let environment = [
                "GATEWAY_DATABASE_URL": url, "GATEWAY_MASTER_KEY": MasterKey.generateBase64(), "GATEWAY_HTTP_PORT": "0",
                "GATEWAY_DATABASE_REQUEST_TIMEOUT_MS": "10000", "GATEWAY_MODE": "development",
                "GATEWAY_MIGRATE_ON_START": "true",
            ]
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let base = "http://127.0.0.1:\(server.port)"

            let created = try await GatewayProcess.run(
                ["admin", "create-token", "--scope", "operator", "--name", "ops"], environment: environment)
            #expect(created.status == 0, "\(created.output)")
            let token = try #require(
                created.output.split(separator: "\n").first { $0.hasPrefix("token:") }?.split(separator: " ").last.map(String.init))
            let tokenID = try #require(
                created.output.split(separator: "\n").first { $0.hasPrefix("token id:") }?.split(separator: " ").last.map(String.init))

            let appID = UUID().lowercasedText
            let api = ["--url", base, "--token", token]
            let steps: [[String]] = [
                ["admin", "create-app", "--app-id", appID, "--name", "cli app", "--environment", "development",
                 "--provider-id", UUID().uuidString, "--credential-type", "static", "--plugins", #"{"static":{"allow_any_user":true}}"#],
                ["admin", "generate-key", "--app-id", appID],
                ["admin", "generate-key", "--app-id", appID, "--bits", "3072"],
            ]
            var outputs: [String] = []
            for step in steps {
                let result = try await GatewayProcess.run(step + api)
                #expect(result.status == 0, "\(step): \(result.output)")
                outputs.append(result.output)
            }
            let nextKey = try #require(
                (try? JSONSerialization.jsonObject(with: Data(outputs[2].utf8)) as? [String: Any])?["key_id"] as? String)
            let activated = try await GatewayProcess.run(["admin", "activate-key", "--app-id", appID, "--key-id", nextKey] + api)
            #expect(activated.output.contains("\"status\":\"active\""), "\(activated.output)")

            let refused = try await GatewayProcess.run(["admin", "generate-key", "--app-id", appID, "--bits", "1024"] + api)
            #expect(refused.status != 0)
            #expect(refused.output.contains("the gateway answered 400: generate.bits must be 2048, 3072 or 4096."))

            let revoked = try await GatewayProcess.run(["admin", "revoke-token", "--id", tokenID] + api)
            #expect(revoked.status == 0, "\(revoked.output)")
            let afterRevoke = try await GatewayProcess.run(["admin", "generate-key", "--app-id", appID] + api)
            #expect(afterRevoke.output.contains("401"))
            #expect(await server.stop() == 0)
        }
    }
}
