import GatewayHTTPTestSupport
import GatewayRuntime
import _CryptoExtras
import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Importing, generating, rotating and deleting keys through the admin API.
@Suite struct KeyAdminTests {
    @Test(arguments: ["pkcs1", "pkcs8"])
    func importsLayerKeysInBothPEMFormsAndNeverShowsThePrivateHalf(_ format: String) async throws {
        let pem = try await TestKeys.opensslPEM(format: format)
        try await MemoryGateway.with { gateway in
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
        try await MemoryGateway.with { gateway in
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
                (["key_id": NSNull(), "generate": [String: Int]()], "key_id must be"),
                (["key_id": NSNull(), "private_key_pem": TestKeys.shared.privateKeyPEM], "key_id must be"),
                (["key_id": 7, "generate": [String: Int]()], "key_id must be"),
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
        try await MemoryGateway.with { gateway in
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
        try await MemoryGateway.with { gateway in
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

    func jwksKeyIDs(_ gateway: MemoryGateway, _ app: AppSettings) async throws -> Set<String> {
        let response = try await gateway.test { try await $0.execute(uri: "/v1/apps/layer%3A%2F%2F%2Fapps%2Fstaging%2F\(app.appID)/jwks.json", method: .get) }
        #expect(response.headers[.cacheControl] == "public, max-age=60")
        let keys = try jsonObject(response)["keys"] as? [[String: Any]] ?? []
        return Set(keys.compactMap { $0["kid"] as? String })
    }

    func validate(_ gateway: MemoryGateway, _ token: String) async throws -> [String: Any] {
        try jsonObject(try await gateway.test { try await $0.postJSON(["identity_token": token], to: "/v1/identity_tokens/validate") })
    }
}
