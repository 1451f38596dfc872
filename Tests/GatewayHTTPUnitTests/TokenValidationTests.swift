import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// `POST /v1/identity_tokens/validate` finds each problem on purpose-built bad tokens (over
/// `MemoryGateway`: what it decides needs no database).
@Suite struct TokenValidationTests {
    /// A token for `app` signed by `signer`, built from edited header and claims.
    static func forge(
        _ app: AppSettings, signer: RSAKeyPair = TestKeys.shared, header edit: (inout [String: Any]) -> Void = { _ in },
        claims editClaims: (inout [String: Any]) -> Void = { _ in }
    ) throws -> String {
        var header: [String: Any] = [
            "typ": "JWT", "alg": "RS256", "cty": "layer-eit;v=1", "kid": TestGateway.keyID(of: app).description,
        ]
        var claims: [String: Any] = [
            "iss": app.providerID.description, "prn": "alice", "iat": 1_700_000_000, "exp": 1_700_000_120, "nce": "abc",
        ]
        edit(&header)
        editClaims(&claims)
        let input = Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "."
            + Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
        return input + "." + Base64URL.encode(try signer.signer.sign(Array(input.utf8)))
    }

    func problems(_ gateway: MemoryGateway, _ token: String) async throws -> (valid: Bool, codes: [String]) {
        let response = try await gateway.test { try await $0.postJSON(["identity_token": token], to: "/v1/identity_tokens/validate") }
        #expect(response.status == .ok)
        let body = try jsonObject(response)
        #expect(Set(body.keys) == ["valid", "app_id", "problems", "header", "claims"], "every member, app_id null when no key")
        let codes = (body["problems"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        return (try #require(body["valid"] as? Bool), codes)
    }

    @Test func aGoodTokenIsValidAndExpiryIsNotJudged() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let verdict = try await problems(gateway, try Self.forge(app))
            #expect(verdict.valid)
            #expect(verdict.codes.isEmpty)
        }
    }

    @Test func eachProblemIsFoundOnItsOwn() async throws {
        let otherKey = try RSAKeyPair.generate(bits: 2048)
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let cases: [(String, String)] = [
                (try Self.forge(app, header: { $0["alg"] = "HS256" }), "wrong_alg,bad_signature"),
                (try Self.forge(app, header: { $0["typ"] = "JOSE" }), "wrong_typ"),
                (try Self.forge(app, header: { $0["cty"] = "layer-eit;v=2" }), "wrong_cty"),
                (try Self.forge(app, header: { $0["kid"] = nil }), "bad_kid"),
                (try Self.forge(app, header: { $0["kid"] = "layer:///keys/\(UUID().uuidString)" }), "unknown_kid"),
                (try Self.forge(app, signer: otherKey), "bad_signature"),
                (try Self.forge(app, claims: { $0["nce"] = nil }), "bad_nce"),
                (try Self.forge(app, claims: { $0["prn"] = 42 }), "bad_prn"),
                (try Self.forge(app, claims: { $0["iat"] = "1700000000" }), "bad_iat"),
                (try Self.forge(app, claims: { $0["exp"] = 1_700_000_000.5 }), "bad_exp"),
                (try Self.forge(app, claims: { $0["exp"] = 1_699_999_999 }), "exp_not_after_iat"),
                (try Self.forge(app, claims: { $0["exp"] = 1_700_000_601 }), "lifetime_too_long"),
                (try Self.forge(app, claims: { $0["first_name"] = ["A"] }), "bad_first_name"),
                (try Self.forge(app, claims: { $0["iss"] = "layer:///providers/\(UUID().uuidString)" }), "unknown_kid"),
                (try Self.forge(app, claims: { $0["iss"] = "someone" }), "bad_iss"),
                ("not.a.token", "malformed_token"),
            ]
            for (token, expected) in cases {
                let verdict = try await problems(gateway, token)
                #expect(!verdict.valid, "\(expected)")
                #expect(verdict.codes.joined(separator: ",") == expected)
            }
        }
    }

    @Test func tamperedClaimsNeverValidate() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let issued = try #require(identityToken(in: try await gateway.test { try await $0.postJSON(aliceRequest(app)) }))
            var parts = issued.split(separator: ".").map(String.init)
            let claimBytes = try #require(Base64URL.decode(parts[1]))
            let decoded = try JSONSerialization.jsonObject(with: claimBytes)
            var claims = try #require(decoded as? [String: Any])
            claims["prn"] = "mallory"
            parts[1] = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims))
            let verdict = try await problems(gateway, parts.joined(separator: "."))
            #expect(!verdict.valid)
            #expect(verdict.codes == ["bad_signature"])
        }
    }

    @Test func theBodyIsCheckedLikeAnyOther() async throws {
        try await MemoryGateway.with { gateway in
            let missing = try await gateway.test { try await $0.postJSON([:], to: "/v1/identity_tokens/validate") }
            #expect(missing.status == .badRequest)
            let form = try await gateway.test { try await $0.post("/v1/identity_tokens/validate", contentType: "text/plain", body: "x") }
            #expect(form.status == .unsupportedMediaType)
        }
    }
}
