import Foundation
import GatewayCore
import GatewayTestSupport
import PostgresNIO
import Testing

/// The master-key rotation runbook, step by step, against real processes.
@Suite struct MasterKeyRotationTests {
    /// Creates an app with a key through a gateway run under `masterKey`;
    /// returns the app and that gateway's environment.
    private static func appWithKeySealed(under masterKey: String, url: String) async throws -> (String, [String: String]) {
        let bootstrap = AdminTokenSecret.generate().text
        var environment = serveEnvironment(url, bootstrap: bootstrap)
        environment["GATEWAY_MASTER_KEY"] = masterKey
        let server = try await GatewayProcess.start(["serve"], environment: environment)
        let appID = try await ResilienceTests.createApp(base: "http://127.0.0.1:\(server.port)", token: bootstrap)
        #expect(await server.stop() == 0)
        return (appID, environment)
    }

    @Test func resealKeysMovesEveryKeyToTheNewMasterKey() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let old = MasterKey.generateBase64()
            let new = MasterKey.generateBase64()
            let (appID, firstEnvironment) = try await Self.appWithKeySealed(under: old, url: url)
            var environment = firstEnvironment

            let database = ["GATEWAY_DATABASE_URL": url, "GATEWAY_MASTER_KEY": new]
            let withoutPrevious = try await GatewayProcess.run(["reseal-keys"], environment: database)
            #expect(withoutPrevious.status != 0)
            #expect(withoutPrevious.output.contains("master_key_previous (GATEWAY_MASTER_KEY_PREVIOUS) is required"))

            var wrongPrevious = database
            wrongPrevious["GATEWAY_MASTER_KEY_PREVIOUS"] = MasterKey.generateBase64()
            let refused = try await GatewayProcess.run(["reseal-keys"], environment: wrongPrevious)
            #expect(refused.status != 0)
            #expect(refused.output.contains("1 key(s) open under neither"), "\(refused.output)")
            #expect(refused.output.contains("app \(appID)"))

            // A user's TOTP secret, sealed under the old key as enrolment seals it.
            let secret = TOTPSecret.generate()
            let app = try #require(AppID(appID))
            let oldSealed = try secret.sealed(under: try MasterKey(base64: old), for: "alice", in: app)
            try await TestDatabase.withClient(url) { client in
                try await client.query(
                    """
                    INSERT INTO second_factors (app_id, user_id, factor_id, totp_sealed, created_at)
                    VALUES (\(app.uuid), 'alice', \(UUID()), \(ByteBuffer(bytes: oldSealed)), now())
                    """, logger: TestDatabase.logger)
            }

            var rotating = database
            rotating["GATEWAY_MASTER_KEY_PREVIOUS"] = old
            let first = try await GatewayProcess.run(["reseal-keys"], environment: rotating)
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("re-sealed 1 TOTP secret(s)"), "\(first.output)")
            let resealed = try await TestDatabase.withClient(url) { client in
                let rows = try await client.query("SELECT totp_sealed FROM second_factors", logger: TestDatabase.logger)
                var found: [UInt8] = []
                for try await sealed in rows.decode(ByteBuffer.self) { found = Array(sealed.readableBytesView) }
                return found
            }
            #expect(try TOTPSecret(unsealing: resealed, under: try MasterKey(base64: new), for: "alice", in: app) == secret)
            #expect(first.output.contains("re-sealed 1 key(s); 0 already under master_key"))
            // The static user's password is a plugin secret, sealed too.
            #expect(first.output.contains("re-sealed 1 plugin secret(s)"), "\(first.output)")
            let again = try await GatewayProcess.run(["reseal-keys"], environment: rotating)
            #expect(again.output.contains("re-sealed 0 key(s); 1 already under master_key"))
            #expect(again.output.contains("re-sealed 0 plugin secret(s)"))
            #expect(again.output.contains("re-sealed 0 TOTP secret(s)"))

            // The new key alone now opens the app's key: tokens are issued.
            environment["GATEWAY_MASTER_KEY"] = new
            let after = try await GatewayProcess.start(["serve"], environment: environment)
            #expect(try await ResilienceTests.attempt("http://127.0.0.1:\(after.port)", appID, password: "right") == 200)
            #expect(await after.stop() == 0)

            let events = try await TestDatabase.withClient(url) { client in
                let rows = try await client.query(
                    "SELECT detail->>'resealed' FROM audit_events WHERE event = 'admin.keys.resealed' ORDER BY id",
                    logger: TestDatabase.logger)
                var resealed: [String] = []
                for try await count in rows.decode(String.self) { resealed.append(count) }
                return resealed
            }
            #expect(events == ["1", "0"])
        }
    }

    @Test func serveOpensKeysSealedUnderThePreviousMasterKey() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let old = MasterKey.generateBase64()
            let (appID, firstEnvironment) = try await Self.appWithKeySealed(under: old, url: url)
            var environment = firstEnvironment

            // Step one of the runbook: replicas run with the new key and the old one as previous.
            environment["GATEWAY_MASTER_KEY"] = MasterKey.generateBase64()
            environment["GATEWAY_MASTER_KEY_PREVIOUS"] = old
            let rolling = try await GatewayProcess.start(["serve"], environment: environment)
            #expect(try await ResilienceTests.attempt("http://127.0.0.1:\(rolling.port)", appID, password: "right") == 200)
            #expect(await rolling.stop() == 0)

            // Without the previous key the old-sealed key does not open: no token.
            environment["GATEWAY_MASTER_KEY_PREVIOUS"] = nil
            let lost = try await GatewayProcess.start(["serve"], environment: environment)
            #expect(try await ResilienceTests.attempt("http://127.0.0.1:\(lost.port)", appID, password: "right") != 200)
            #expect(await lost.stop() == 0)
        }
    }
}
