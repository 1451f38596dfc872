import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

@Suite struct IdentityTokenTests {
    static let keyID = KeyID("layer:///keys/cd8c286e-f2e4-11e5-99fe-eecb000000b0")!
    static let providerID = ProviderID("layer:///providers/cf0eb712-d9ab-11e5-b6a9-c01d00006542")!

    func mint(_ identity: VerifiedIdentity, nonce: String = "abc+/=123", ttl: Int = 120) throws -> String {
        let claims = IdentityTokenClaims(
            issuer: Self.providerID, identity: identity, nonce: nonce, issuedAt: 1_461_023_254, lifetimeSeconds: ttl)
        return try TokenSigningKey(keyID: Self.keyID, signer: TestKeys.shared.signer).mint(claims)
    }

    func decodePart(_ token: String, _ index: Int) throws -> [String: Any] {
        let part = token.split(separator: ".")[index]
        let data = try #require(Base64URL.decode(part))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theHeaderHasExactlyTheFourLayerMembers() throws {
        let header = try decodePart(try mint(VerifiedIdentity(userID: "alice")), 0)
        #expect(Set(header.keys) == ["typ", "alg", "cty", "kid"])
        #expect(header["typ"] as? String == "JWT")
        #expect(header["alg"] as? String == "RS256")
        #expect(header["cty"] as? String == "layer-eit;v=1")
        #expect(header["kid"] as? String == "layer:///keys/cd8c286e-f2e4-11e5-99fe-eecb000000b0")
    }

    @Test(arguments: [30, 120, 600])
    func claimsHaveLayerTypesAndTheTenantLifetime(_ ttl: Int) throws {
        let token = try mint(VerifiedIdentity(userID: "alice"), ttl: ttl)
        let claims = try decodePart(token, 1)
        #expect(Set(claims.keys) == ["iss", "prn", "iat", "exp", "nce"])
        #expect(claims["iss"] as? String == "layer:///providers/cf0eb712-d9ab-11e5-b6a9-c01d00006542")
        #expect(claims["prn"] as? String == "alice")
        // Integers, not strings or fractions.
        let claimsText = String(decoding: try #require(Base64URL.decode(token.split(separator: ".")[1])), as: UTF8.self)
        #expect(claimsText.contains(#""iat":1461023254,"#))
        #expect(claimsText.contains(#""exp":\#(1_461_023_254 + ttl),"#))
        #expect(claims["nce"] as? String == "abc+/=123")
    }

    @Test func optionalProfileClaimsAppearOnlyWhenNonEmpty() throws {
        let identity = VerifiedIdentity(
            userID: "bob", profile: UserProfile([.firstName: "Bob", .lastName: "", .avatarURL: "https://example.com/b.png"]))
        let claims = try decodePart(try mint(identity), 1)
        #expect(claims["first_name"] as? String == "Bob")
        #expect(claims["avatar_url"] as? String == "https://example.com/b.png")
        #expect(claims["last_name"] == nil)
        #expect(claims["display_name"] == nil)
    }

    @Test(arguments: ["quote\"back\\slash", "line\nbreak\ttab\u{1}", "ünïcødé 👋", "</script>"])
    func awkwardStringsSurviveJSONExactly(_ userID: String) throws {
        let claims = try decodePart(try mint(VerifiedIdentity(userID: userID)), 1)
        #expect(claims["prn"] as? String == userID)
    }

    @Test func aLongNonceSurvivesByteForByte() throws {
        let visibleASCII = (0x21...0x7E).map { Character(UnicodeScalar(UInt8($0))) }
        let nonce = String((0..<1024).map { visibleASCII[($0 * 7) % visibleASCII.count] })
        let claims = try decodePart(try mint(VerifiedIdentity(userID: "a"), nonce: nonce), 1)
        #expect(claims["nce"] as? String == nonce)
    }

    @Test func openSSLVerifiesTheSignature() async throws {
        let token = try mint(VerifiedIdentity(userID: "alice"))
        let parts = token.split(separator: ".")
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(signature.count == 256)
        #expect(try await OpenSSL.verifiesRS256(message: signingInput, signature: signature, publicKeyPEM: TestKeys.shared.publicKeyPEM))
        var tampered = signingInput
        tampered[tampered.count - 1] ^= 1
        #expect(try await OpenSSL.verifiesRS256(message: tampered, signature: signature, publicKeyPEM: TestKeys.shared.publicKeyPEM) == false)
    }

    @Test func theParserChecksTheSignatureAndRefusesTampering() throws {
        let token = try mint(VerifiedIdentity(userID: "alice"))
        let parsed = try #require(ParsedIdentityToken(compact: token))
        #expect(parsed.hasValidSignature(publicKeyPEM: TestKeys.shared.publicKeyPEM))
        #expect(parsed.claims["prn"] == .string("alice"))

        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Data(#"{"prn":"mallory"}"#.utf8))
        let forged = try #require(ParsedIdentityToken(compact: parts.joined(separator: ".")))
        #expect(!forged.hasValidSignature(publicKeyPEM: TestKeys.shared.publicKeyPEM))

        let otherKey = try RSAKeyPair.generate(bits: 2048)
        #expect(!parsed.hasValidSignature(publicKeyPEM: otherKey.publicKeyPEM))
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "!!.e30.AA", "e30.e30", "W10.e30.AA"])
    func malformedCompactTokensDoNotParse(_ text: String) {
        #expect(ParsedIdentityToken(compact: text) == nil)
    }

    @Test func base64URLRoundTripsWithoutPadding() {
        for length in 0..<40 {
            let bytes = Data((0..<length).map { UInt8(($0 * 37 + 250) % 256) })
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab+c") == nil)
    }

    /// What a token is built with: the encoding appended to what is already
    /// there, whatever the input's length leaves over (0, 1 or 2 bytes).
    @Test func base64URLAppendsAfterWhatIsThere() {
        for length in 0..<12 {
            let bytes = (0..<length).map { UInt8(($0 * 91 + 7) % 256) }
            var output = Array("head.".utf8)
            Base64URL.append(bytes, to: &output)
            #expect(String(decoding: output, as: UTF8.self) == "head." + Base64URL.encode(bytes))
        }
    }
}
