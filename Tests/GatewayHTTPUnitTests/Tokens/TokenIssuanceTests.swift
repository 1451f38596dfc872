import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// The happy paths of `POST /v1/identity_tokens`, checked from outside.
@Suite struct TokenIssuanceTests {
    func claims(of token: String) throws -> [String: Any] {
        let data = try #require(Base64URL.decode(token.split(separator: ".")[1]))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func issuesAVerifiableLayerTokenWithTheTenantsSettings() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let before = Int(Date().timeIntervalSince1970)
            let response = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            let after = Int(Date().timeIntervalSince1970)

            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json; charset=utf-8")
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(response.headers[HTTPField.Name("x-request-id")!] != nil)
            let token = try #require(identityToken(in: response))
            let parsed = try #require(ParsedIdentityToken(compact: token))
            #expect(parsed.header["kid"] == .string(TestGateway.keyID(of: app).description))

            let claims = try claims(of: token)
            #expect(claims["iss"] as? String == app.providerID.description)
            #expect(claims["prn"] as? String == "alice")
            #expect(claims["nce"] as? String == "abc+/=123")
            #expect(claims["first_name"] as? String == "Alice")
            #expect(claims["display_name"] as? String == "Alice L.")
            #expect(claims["avatar_url"] as? String == "https://example.com/alice.png")
            #expect(claims["last_name"] == nil)
            let iat = try #require(claims["iat"] as? Int)
            let exp = try #require(claims["exp"] as? Int)
            #expect((before...after).contains(iat))
            #expect(exp - iat == 300)

            let parts = token.split(separator: ".")
            #expect(
                try await OpenSSL.verifiesRS256(
                    message: Data("\(parts[0]).\(parts[1])".utf8), signature: try #require(Base64URL.decode(parts[2])),
                    publicKeyPEM: TestKeys.shared.publicKeyPEM))
        }
    }

    @Test func theNonceSurvivesByteForByteThroughJSONAndForms() async throws {
        let visibleASCII = (0x21...0x7E).map { Character(UnicodeScalar(UInt8($0))) }
        let longNonce = String((0..<1024).map { visibleASCII[($0 * 11) % visibleASCII.count] })
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            for nonce in ["abc+/=123", longNonce] {
                let json = try await gateway.test { try await $0.postJSON(aliceRequest(app, nonce: nonce)) }
                #expect(try claims(of: try #require(identityToken(in: json)))["nce"] as? String == nonce)

                let form = [
                    ("app_id", app.appID.description), ("user_id", "alice"), ("nonce", nonce),
                    ("credentials[type]", "static"), ("credentials[password]", "wonderland"),
                ]
                .map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
                let formResponse = try await gateway.test {
                    try await $0.post(contentType: "application/x-www-form-urlencoded; charset=utf-8", body: form)
                }
                #expect(try claims(of: try #require(identityToken(in: formResponse)))["nce"] as? String == nonce)
            }
        }
    }

    @Test func aFormNonceWhosePlusWasNotEncodedIsRefusedWithTheReason() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let response = try await gateway.test {
                try await $0.post(
                    contentType: "application/x-www-form-urlencoded",
                    body: "app_id=\(app.appID)&user_id=alice&nonce=abc+/=123&credentials[type]=static&credentials[password]=wonderland")
            }
            #expect(response.status == .badRequest)
            #expect(try (errorBody(response)["message"] as? String)?.contains("URL-decoded") == true)
        }
    }

    @Test(arguments: ["layer:///apps/staging/", "layer:///apps/production/", "", "LAYER:///APPS/STAGING/"])
    func everyAppIDFormReachesTheSameApp(_ prefix: String) async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            var request = aliceRequest(app)
            let uuid = app.appID.description
            request["app_id"] = prefix + (prefix.hasPrefix("LAYER") ? uuid.uppercased() : uuid)
            let body = request
            let response = try await gateway.test { try await $0.postJSON(body) }
            #expect(response.status == .ok)
        }
    }

    @Test(arguments: ["/identity_tokens", "/authenticate"])
    func layerSamplePathsServeTheSameEndpoint(_ path: String) async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let response = try await gateway.test { try await $0.postJSON(aliceRequest(app), to: path) }
            #expect(identityToken(in: response) != nil)
        }
    }

    @Test func aUserWithoutAPasswordNeedsNone() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let response = try await gateway.test {
                try await $0.postJSON(["app_id": app.appID.description, "user_id": "bob", "nonce": "n", "credentials": ["type": "static"]])
            }
            #expect(try claims(of: try #require(identityToken(in: response)))["prn"] as? String == "bob")
        }
    }

    @Test func anyUserIsAcceptedWithoutCredentialsOnlyWhenTheAppSaysSo() async throws {
        try await MemoryGateway.with { gateway in
            let strict = try await gateway.createApp()
            let open = try await gateway.createApp { $0.plugins = ["static": .object(["allow_any_user": .bool(true)])] }
            // Layer's quick-start clients send no credentials object at all.
            @Sendable func request(_ app: AppSettings) -> [String: any Sendable] {
                ["app_id": app.appID.description, "user_id": "carol", "nonce": "abc"]
            }
            let refused = try await gateway.test { try await $0.postJSON(request(strict)) }
            let accepted = try await gateway.test { try await $0.postJSON(request(open)) }
            #expect(refused.status == .unauthorized)
            #expect(try claims(of: try #require(identityToken(in: accepted)))["prn"] as? String == "carol")
        }
    }

    @Test func aWellFormedIncomingRequestIDIsKeptAndAHostileOneReplaced() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let kept = try await gateway.test {
                try await $0.postJSON(aliceRequest(app), headers: [HTTPField.Name("x-request-id")!: "lb-1234.abc_DEF"])
            }
            let replaced = try await gateway.test {
                try await $0.postJSON(aliceRequest(app), headers: [HTTPField.Name("x-request-id")!: "evil\"id with spaces"])
            }
            #expect(kept.headers[HTTPField.Name("x-request-id")!] == "lb-1234.abc_DEF")
            let generated = try #require(replaced.headers[HTTPField.Name("x-request-id")!])
            #expect(UUID(canonicalText: generated) != nil)
        }
    }
}

/// Percent-encodes everything but unreserved characters, as a careful client does.
func formEncode(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"))!
}
