import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// The log, at trace level, as JSON: every line is one object, and no secret
/// that passed through the gateway appears in any of them.
@Suite struct LogSecretTests {
    @Test func knownSecretsFedThroughEveryPathNeverReachTheLog() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            let masterKey = MasterKey.generateBase64()
            let server = try await GatewayProcess.start(
                ["serve"],
                environment: [
                    "GATEWAY_DATABASE_URL": url, "GATEWAY_MASTER_KEY": masterKey, "GATEWAY_HTTP_PORT": "0",
                    "GATEWAY_MIGRATE_ON_START": "true", "GATEWAY_ADMIN_BOOTSTRAP_TOKEN": bootstrap,
                    "GATEWAY_LOG_LEVEL": "trace", "GATEWAY_LOG_FORMAT": "json", "GATEWAY_DATABASE_REQUEST_TIMEOUT_MS": "10000",
                    "GATEWAY_MODE": "development",
                ])
            let base = "http://127.0.0.1:\(server.port)"
            let userPassword = "correct horse battery staple"
            let staticPassword = "static-secret-password"
            let webhookSecret = "webhook-secret-0123456789"
            let pem = try TestKeys.opensslPEM(format: "pkcs8")
            let appID = UUID().lowercasedText

            let minted = try await HTTPCall.send(
                "POST", "\(base)/admin/v1/admin_tokens", token: bootstrap, json: ["name": "ops", "scope": "operator"])
            #expect(minted.status == 201)
            let adminToken = try #require(minted.json["token"] as? String)
            let sender: [String: any Sendable] = ["type": "webhook", "url": "http://127.0.0.1:9/", "secret": webhookSecret]
            let plugins: [String: any Sendable] = [
                "static": ["users": [["user_id": "sam", "password": staticPassword]]], "phone_code": ["sender": sender],
            ]
            let created = try await HTTPCall.send(
                "POST", "\(base)/admin/v1/apps", token: adminToken,
                json: [
                    "app_id": appID, "name": "secrets", "environment": "development", "provider_id": UUID().uuidString,
                    "credential_types": ["password", "static", "phone_code"],
                    "plugins": plugins,
                ])
            #expect(created.status == 201, "\(created.text)")
            let key = try await HTTPCall.send(
                "POST", "\(base)/admin/v1/apps/\(appID)/keys", token: adminToken,
                json: ["key_id": UUID().uuidString, "private_key_pem": pem])
            #expect(key.status == 201, "\(key.text)")
            let user = try await HTTPCall.send(
                "PUT", "\(base)/admin/v1/apps/\(appID)/users/ada", token: adminToken, json: ["password": userPassword])
            #expect(user.status == 201)

            func token(_ credentials: [String: String], user: String) async throws -> HTTPCall.Answer {
                try await HTTPCall.send(
                    "POST", "\(base)/v1/identity_tokens",
                    json: ["app_id": appID, "user_id": user, "nonce": "n-1", "credentials": credentials])
            }
            let issued = try await token(["type": "password", "password": userPassword], user: "ada")
            #expect(issued.status == 200)
            let identityToken = try #require(issued.json["identity_token"] as? String)
            #expect(try await token(["type": "password", "password": userPassword + "!"], user: "ada").status == 401)
            #expect(try await token(["type": "static", "password": staticPassword], user: "sam").status == 200)
            let validated = try await HTTPCall.send(
                "POST", "\(base)/v1/identity_tokens/validate", json: ["identity_token": identityToken])
            #expect(validated.status == 200)
            let sent = try await HTTPCall.send(
                "POST", "\(base)/v1/phone_codes", json: ["app_id": appID, "phone_number": "+4915112345678"])
            #expect(sent.status == 202, "an unbound number is answered without sending")

            #expect(await server.stop() == 0)
            let log = server.printed
            let databasePassword = try #require(url.split(separator: "@").first?.split(separator: ":").last.map(String.init))
            let pemLine = try #require(pem.split(separator: "\n").dropFirst().first.map(String.init))
            for (name, secret) in [
                ("database password", databasePassword), ("master key", masterKey), ("bootstrap token", bootstrap),
                ("admin token", adminToken), ("private key", pemLine), ("user password", userPassword),
                ("static password", staticPassword), ("webhook secret", webhookSecret), ("identity token", identityToken),
                ("token signature", String(identityToken.split(separator: ".").last ?? "")),
            ] {
                #expect(!log.contains(secret), "the log contains the \(name)")
            }

            var requestLines = 0
            for line in log.split(separator: "\n") where line.hasPrefix("{") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                #expect(object["time"] is String && object["level"] is String && object["message"] is String)
                if object["message"] as? String == "request" {
                    requestLines += 1
                    #expect(object["route"] is String && object["status"] is String && object["duration_ms"] is String)
                    #expect(object["request_id"] is String)
                }
            }
            #expect(requestLines >= 9)
            #expect(log.contains(#""app_id":"layer:///apps/staging/\#(appID)""#) || log.contains(#""app_id":"\#(appID)""#))
            let notJSON = log.split(separator: "\n").filter { !$0.hasPrefix("{") && !$0.isEmpty }
            #expect(notJSON.isEmpty, "\(notJSON.prefix(3))")
        }
    }
}
