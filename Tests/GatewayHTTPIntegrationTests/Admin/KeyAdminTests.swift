import GatewayHTTPTestSupport
import GatewayRuntime
import _CryptoExtras
import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// Importing, generating, rotating and deleting keys through the admin API.
@Suite struct KeyAdminTests {
    @Test(arguments: ["pkcs1", "pkcs8"])
    func importsLayerKeysInBothPEMFormsAndNeverShowsThePrivateHalf(_ format: String) async throws {
        let pem = try await TestKeys.opensslPEM(format: format)
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp(activeKey: false)
            let token = try await gateway.adminToken(.operator)
            let keyID = "layer:///keys/\(UUID().lowercasedText)"
            let response = try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: ["key_id": keyID, "private_key_pem": pem])
            #expect(response.status == .created)
            let key = try jsonObject(response)
            #expect(key["key_id"] as? String == keyID)
            #expect(key["status"] as? String == "active")  // the app's first key signs at once
            #expect(key["bits"] as? Int == 2048)
            #expect((key["public_key_pem"] as? String)?.contains("BEGIN PUBLIC KEY") == true)
            let jwk = try #require(key["jwk"] as? [String: Any])
            #expect(jwk["kty"] as? String == "RSA" && jwk["alg"] as? String == "RS256" && jwk["kid"] as? String == keyID)
            #expect(!text(response).contains("PRIVATE"))

            let list = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/keys", token: token)
            #expect(!text(list).contains("PRIVATE"))
            #expect(!text(list).contains("sealed"))
            let pemLine = String(pem.split(separator: "\n")[1])
            for row in try await gateway.auditRows() {
                #expect(!row.text.contains("PRIVATE") && !row.text.contains(pemLine))
            }
            // The imported key signs the next token.
            let issued = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            let parsed = try #require(identityToken(in: issued).flatMap(ParsedIdentityToken.init(compact:)))
            #expect(parsed.header["kid"] == .string(keyID))
        }
    }

    @Test func refusesBadPEMsWeakKeysAndAmbiguousBodies() async throws {
        let small = try await TestKeys.opensslPEM(format: "pkcs8", bits: 1024)
        let smallExponent = try await OpenSSL.generatedPEM(
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt", "rsa_keygen_pubexp:3"])
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp(activeKey: false)
            let token = try await gateway.adminToken(.operator)
            let cases: [([String: any Sendable], String)] = [
                (["key_id": UUID().uuidString, "private_key_pem": "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----"], "could not be read"),
                (["key_id": UUID().uuidString, "private_key_pem": small], "1024-bit key"),
                (["key_id": UUID().uuidString, "private_key_pem": smallExponent], "public exponent must be odd and at least 65537"),
                (["key_id": UUID().uuidString, "private_key_pem": small + small], "exactly one PEM block"),
                (["private_key_pem": TestKeys.shared.privateKeyPEM], "key_id is required"),
                (["key_id": UUID().uuidString, "private_key_pem": TestKeys.shared.privateKeyPEM, "generate": ["bits": 2048]], "not both"),
                (["generate": ["bits": 1024]], "generate.bits must be"),
                (["key_id": "layer:///apps/x", "generate": [String: Int]()], "key_id must be"),
                (["pem": "x"], "pem is not a field"),
            ]
            for (body, message) in cases {
                let response = try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: body)
                #expect(response.status == .badRequest, "\(message)")
                #expect((try jsonObject(response)["message"] as? String)?.contains(message) == true, "\(text(response))")
                #expect(!text(response).contains("nope"))
            }
        }
    }

    @Test func generatesKeysOffThePoolAndAKeyIDBelongsToOneApp() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp()
            let other = try await gateway.createApp()
            let token = try await gateway.adminToken(.operator)
            let generated = try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: ["generate": ["bits": 2048]])
            #expect(generated.status == .created)
            #expect(try jsonObject(generated)["status"] as? String == "next")  // the app already had an active key

            let taken = TestGateway.keyID(of: app).description
            let clash = try await gateway.admin(
                    .post, "/admin/v1/apps/\(other.appID)/keys", token: token,
                    json: ["key_id": taken, "private_key_pem": TestKeys.shared.privateKeyPEM])
            #expect(clash.status == .conflict)
        }
    }

    @Test func rotationKeepsOldTokensVerifiableUntilTheKeyIsDeleted() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp()
            let token = try await gateway.adminToken(.app(app.appID))
            let oldKey = TestGateway.keyID(of: app)
            let before = try #require(identityToken(in: try await gateway.test { try await $0.postJSON(aliceRequest(app)) }))

            let created = try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: ["generate": [String: Int]()])
            let newKeyText = try jsonObject(created)["key_id"] as? String
            let newKey = try #require(newKeyText.flatMap(KeyID.init))
            // Published before it signs, once this replica hears of the change (the cache held the old set).
            #expect(try await jwksKeyIDs(gateway, app) == Set([oldKey.description]))
            gateway.tenants.invalidate(app.appID)
            #expect(try await jwksKeyIDs(gateway, app) == Set([oldKey.description, newKey.description]))

            let activatePath = "/admin/v1/apps/\(app.appID)/keys/\(newKey.uuid)/activate"
            let activated = try await gateway.admin(.post, activatePath, token: token)
            #expect(try jsonObject(activated)["status"] as? String == "active")
            let keys = try jsonObject(try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/keys", token: token))
            let statuses = Dictionary(
                uniqueKeysWithValues: (keys["items"] as? [[String: Any]] ?? []).map { ($0["key_id"] as! String, $0["status"] as! String) })
            #expect(statuses == [oldKey.description: "retired", newKey.description: "active"])

            // New tokens carry the new kid once this replica hears of the change.
            gateway.tenants.invalidate(app.appID)
            let after = try #require(identityToken(in: try await gateway.test { try await $0.postJSON(aliceRequest(app)) }))
            #expect(ParsedIdentityToken(compact: after)?.header["kid"] == .string(newKey.description))

            // The old token still verifies with the key set alone: its key is retired, still published.
            let jwks = try jsonObject(try await gateway.test { try await $0.execute(uri: "/v1/apps/\(app.appID)/jwks.json", method: .get) })
            let oldJWK = try #require((jwks["keys"] as? [[String: Any]])?.first { $0["kid"] as? String == oldKey.description })
            let publicKey = try _RSA.Signing.PublicKey(
                n: try #require(Base64URL.decode(oldJWK["n"] as? String ?? "")),
                e: try #require(Base64URL.decode(oldJWK["e"] as? String ?? "")))
            let parts = before.split(separator: ".")
            #expect(
                publicKey.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2]))),
                    for: Data("\(parts[0]).\(parts[1])".utf8), padding: .insecurePKCS1v1_5))
            #expect(try await validate(gateway, before)["valid"] as? Bool == true)
            #expect(try await validate(gateway, after)["valid"] as? Bool == true)

            let newKeyPath = "/admin/v1/apps/\(app.appID)/keys/\(newKey.uuid)"
            let refused = try await gateway.admin(.delete, newKeyPath, token: token)
            #expect(refused.status == .conflict)
            #expect(try jsonObject(refused)["error"] as? String == "key_active")
            let oldKeyPath = "/admin/v1/apps/\(app.appID)/keys/\(oldKey.uuid)"
            let deleted = try await gateway.admin(.delete, oldKeyPath, token: token)
            #expect(deleted.status == .noContent)
            let verdict = try await validate(gateway, before)
            #expect(verdict["valid"] as? Bool == false)
            #expect((verdict["problems"] as? [[String: Any]])?.map { $0["code"] as? String } == ["unknown_kid"])
        }
    }

    /// Thirty imports at once into an app without keys: the key set is
    /// locked per app, so exactly one becomes active and exactly
    /// ``StoredKey/maximumPerApp`` are stored; the rest are 409s.
    @Test func parallelImportsStopAtTheKeyLimitWithOneActiveKey() async throws {
        let attempts = 30
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp(activeKey: false)
            let token = try await gateway.adminToken(.app(app.appID))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<attempts {
                    group.addTask {
                        let body: [String: any Sendable] = [
                            "key_id": UUID().uuidString, "private_key_pem": TestKeys.shared.privateKeyPEM,
                        ]
                        let response = try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: body)
                        if response.status == .conflict {
                            #expect(try jsonObject(response)["message"] as? String == "The app holds 20 keys, the most it may; delete a retired one first.")
                        }
                        return Int(response.status.code)
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == StoredKey.maximumPerApp)
            #expect(statuses.filter { $0 == 409 }.count == attempts - StoredKey.maximumPerApp)
            let stored = try await gateway.client.query(
                "SELECT status FROM app_keys WHERE app_id = \(app.appID.uuid)", logger: TestDatabase.logger
            ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
            #expect(stored.count == StoredKey.maximumPerApp)
            #expect(stored.filter { $0 == "active" }.count == 1)
            #expect(try await gateway.auditRows().filter { $0.event == "admin.key.created" }.count == StoredKey.maximumPerApp)
        }
    }

    /// Key generation runs one at a time with two waiting: a burst of 4096-bit
    /// requests from one app admin is answered 503 `busy` past that, at once,
    /// instead of taking every core from every tenant.
    @Test func aBurstOfKeyGenerationsIsRefusedPastTheQueue() async throws {
        let attempts = 8
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp(activeKey: false)
            let token = try await gateway.adminToken(.app(app.appID))
            let answers = try await withThrowingTaskGroup(of: (Int, String?, String?).self) { group in
                for _ in 0..<attempts {
                    group.addTask {
                        let response = try await gateway.admin(
                            .post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: ["generate": ["bits": 4096]])
                        let code = response.status == .created ? nil : try jsonObject(response)["error"] as? String
                        return (Int(response.status.code), code, response.headers[.retryAfter])
                    }
                }
                return try await group.reduce(into: [(Int, String?, String?)]()) { $0.append($1) }
            }
            let created = answers.filter { $0.0 == 201 }.count
            let busy = answers.filter { $0.0 == 503 && $0.1 == "busy" && $0.2 == "1" }.count
            #expect(created + busy == attempts, "\(answers)")
            #expect(created >= 1 && busy >= 1, "\(answers)")
            let stored = try await gateway.client.query(
                "SELECT count(*)::int8 FROM app_keys WHERE app_id = \(app.appID.uuid)", logger: TestDatabase.logger
            ).decode(Int.self).reduce(0) { $0 + $1 }
            #expect(stored == created)
        }
    }

    func jwksKeyIDs(_ gateway: TestGateway, _ app: AppSettings) async throws -> Set<String> {
        let response = try await gateway.test { try await $0.execute(uri: "/v1/apps/layer%3A%2F%2F%2Fapps%2Fstaging%2F\(app.appID)/jwks.json", method: .get) }
        #expect(response.headers[.cacheControl] == "public, max-age=60")
        let keys = try jsonObject(response)["keys"] as? [[String: Any]] ?? []
        return Set(keys.compactMap { $0["kid"] as? String })
    }

    func validate(_ gateway: TestGateway, _ token: String) async throws -> [String: Any] {
        try jsonObject(try await gateway.test { try await $0.postJSON(["identity_token": token], to: "/v1/identity_tokens/validate") })
    }
}
