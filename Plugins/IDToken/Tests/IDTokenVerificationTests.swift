import Crypto
import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// ID tokens from a real OpenID provider (oidc-provider-mock on loopback),
/// and the attacks on each check: every attack is a 401 whose audit reason
/// names the check, and none is a token.
@Suite struct IDTokenVerificationTests {
    @Test func aProvidersIDTokenSignsInOnceAsItsSubject() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins()) { gateway in
                let audience = try await provider.clientID("ios")
                let app = try await gateway.createIDTokenApp([
                    ["name": "corp", "issuer": provider.base, "audiences": ["web.example", audience], "profile": true]
                ])
                let nonce = "layer-nonce-\(UUID())"
                let token = try await provider.idToken(
                    subject: "ada", nonce: nonce,
                    claims: [
                        "name": "Ada Lovelace", "picture": "https://example.com/ada.png", "email": "ada@example.com",
                        "email_verified": true,
                    ])
                let signedIn = try await gateway.idTokenLogin(app, token: token, nonce: nonce)
                #expect(signedIn.status == .ok, "\(text(signedIn))")
                let claims = try claims(of: signedIn)
                #expect(claims["prn"] as? String == "corp:ada")
                #expect(claims["nce"] as? String == nonce)
                #expect(claims["display_name"] as? String == "Ada Lovelace")
                #expect(claims["avatar_url"] as? String == "https://example.com/ada.png")
                #expect(claims["email"] as? String == "ada@example.com")
                #expect(try await gateway.auditReason(of: signedIn) == nil)

                // An address the provider does not vouch for is not carried.
                let unverifiedNonce = "layer-nonce-\(UUID())"
                let unverified = try await provider.idToken(
                    subject: "ada", nonce: unverifiedNonce, claims: ["name": "Ada Lovelace", "email": "ada@example.com"])
                let withoutEmail = try await gateway.idTokenLogin(app, token: unverified, nonce: unverifiedNonce)
                #expect(withoutEmail.status == .ok, "\(text(withoutEmail))")
                let compact = try #require(identityToken(in: withoutEmail))
                #expect(ParsedIdentityToken(compact: compact)?.claims["email"] == nil)
                #expect(ParsedIdentityToken(compact: compact)?.claims["display_name"] == .string("Ada Lovelace"))

                // The same token again, even with the right nonce and user: once only.
                let again = try await gateway.idTokenLogin(app, token: token, nonce: nonce, user: "corp:ada")
                #expect(again.status == .unauthorized)
                #expect(identityToken(in: again) == nil)
                #expect(try await gateway.auditReason(of: again) == "id_token_replayed")

                // Nothing of the token is kept but its digest.
                let rows = try await gateway.auditRows().map(\.text).joined()
                #expect(!rows.contains(token) && !rows.contains(String(token.split(separator: ".")[2])))
            }
        }
    }

    /// With `link_verified_email: "password"`, a verified email that is a
    /// password user's id signs in as that user; an unverified one, or
    /// linking off, signs in as the provider's user; a disabled user is refused.
    @Test func aVerifiedEmailLinksToAPasswordUserOnlyWhenTheAppOptsIn() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins()) { gateway in
                let audience = try await provider.clientID("ios")
                let corp: [String: any Sendable] = ["name": "corp", "issuer": provider.base, "audiences": [audience]]
                let linking = try await gateway.createIDTokenApp([corp], linking: true)
                let plain = try await gateway.createIDTokenApp([corp])
                let token = try await gateway.adminToken(.operator)
                for app in [linking, plain] {
                    for (user, disabled) in [("ada@example.com", false), ("eve@example.com", true)] {
                        let put = try await gateway.admin(
                            .put, "/admin/v1/apps/\(app.appID)/users/\(user)", token: token,
                            json: ["password": "analytical engine", "display_name": "Local \(user)", "disabled": disabled])
                        #expect(put.status == .created, "\(text(put))")
                    }
                }
                func login(_ app: AppSettings, subject: String, email: String, verified: Bool) async throws -> TestResponse {
                    let nonce = "layer-nonce-\(UUID())"
                    let idToken = try await provider.idToken(
                        subject: subject, nonce: nonce, claims: ["email": email, "email_verified": verified])
                    return try await gateway.idTokenLogin(app, token: idToken, nonce: nonce)
                }
                let linked = try await login(linking, subject: "g-1", email: "ada@example.com", verified: true)
                #expect(linked.status == .ok, "\(text(linked))")
                #expect(try claims(of: linked)["prn"] as? String == "ada@example.com")
                #expect(try claims(of: linked)["display_name"] as? String == "Local ada@example.com")

                let unverified = try await login(linking, subject: "g-2", email: "ada@example.com", verified: false)
                #expect(try claims(of: unverified)["prn"] as? String == "corp:g-2")
                let elsewhere = try await login(plain, subject: "g-3", email: "ada@example.com", verified: true)
                #expect(try claims(of: elsewhere)["prn"] as? String == "corp:g-3")
                let stranger = try await login(linking, subject: "g-4", email: "nobody@example.com", verified: true)
                #expect(try claims(of: stranger)["prn"] as? String == "corp:g-4")

                let disabled = try await login(linking, subject: "g-5", email: "eve@example.com", verified: true)
                #expect(disabled.status == .unauthorized)
                #expect(try await gateway.auditReason(of: disabled) == "disabled")
            }
        }
    }

    /// Issue 56 (Low): linking is each provider's. With it on for the
    /// company's directory only, another provider's verified email naming a
    /// password user signs in as that provider's own user, never the password
    /// user; and the old app-wide setting is refused, naming where it went.
    @Test func aVerifiedEmailLinksOnlyThroughTheProvidersThatSaySo() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins()) { gateway in
                let audience = try await provider.clientID("ios")
                let app = try await gateway.createIDTokenApp([
                    ["name": "corp", "issuer": provider.base, "audiences": [audience], "link_verified_email": "password"],
                    ["name": "social", "issuer": "https://social.example", "audiences": ["social-client"],
                     "jwks_url": provider.base + "/ec/keys"],
                ])
                let token = try await gateway.adminToken(.operator)
                let put = try await gateway.admin(
                    .put, "/admin/v1/apps/\(app.appID)/users/ada@example.com", token: token, json: ["password": "analytical engine"])
                #expect(put.status == .created, "\(text(put))")

                let nonce = "layer-nonce-\(UUID())"
                var socialClaims = providerClaims(issuer: "https://social.example", audience: "social-client", subject: "s-1", nonce: nonce)
                socialClaims["email"] = "ada@example.com"
                socialClaims["email_verified"] = true
                let social = try await gateway.idTokenLogin(app, token: try await provider.signed(socialClaims, key: "ec"), nonce: nonce)
                #expect(social.status == .ok, "\(text(social))")
                #expect(try claims(of: social)["prn"] as? String == "social:s-1")

                let corpNonce = "layer-nonce-\(UUID())"
                let corp = try await gateway.idTokenLogin(
                    app, token: try await provider.idToken(
                        subject: "c-1", nonce: corpNonce, claims: ["email": "ada@example.com", "email_verified": true]),
                    nonce: corpNonce)
                #expect(try claims(of: corp)["prn"] as? String == "ada@example.com")

                let corpOnly: [[String: any Sendable]] = [["name": "corp", "issuer": provider.base, "audiences": [audience]]]
                let idTokenOptions: [String: any Sendable] = ["link_verified_email": "password", "providers": corpOnly]
                let plugins: [String: any Sendable] = ["id_token": idTokenOptions, "password": [String: String]()]
                let appWide = try await gateway.admin(.patch, "/admin/v1/apps/\(app.appID)", token: token, json: ["plugins": plugins])
                #expect(appWide.status == .badRequest)
                #expect(text(appWide).contains("each provider's own setting"), "\(text(appWide))")
            }
        }
    }

    /// Each forged or misused token against the check that must catch it.
    @Test func eachAttackIsRefusedByTheCheckItAims() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins()) { gateway in
                let audience = try await provider.clientID("ios")
                let otherAppsAudience = try await provider.clientID("other-app")
                let app = try await gateway.createIDTokenApp([
                    ["name": "corp", "issuer": provider.base, "audiences": [audience]]
                ])
                // The provider's real kid, for forgeries that claim it.
                let providerKeyID = try await provider.keyID()

                let nonce = "layer-nonce-\(UUID())"
                let valid = providerClaims(issuer: provider.base, audience: audience, nonce: nonce)
                var expired = valid
                expired["iat"] = Date().timeIntervalSince1970.rounded(.down) - 7200
                expired["exp"] = Date().timeIntervalSince1970.rounded(.down) - 3600
                var future = valid
                future["iat"] = Date().timeIntervalSince1970.rounded(.down) + 600
                var foreign = valid
                foreign["iss"] = "https://evil.example"
                var noSubject = valid
                noSubject["sub"] = nil

                let attacks: [(String, String, String)] = [
                    ("alg none", try await provider.signed(valid, key: "none"), "id_token_algorithm"),
                    ("HS256 keyed with the provider's public key", try await provider.signed(valid, key: "hs256-public-key", header: ["kid": providerKeyID]), "id_token_algorithm"),
                    ("another issuer", try await provider.signed(foreign, key: "stranger"), "id_token_issuer"),
                    ("a stranger's key under the provider's kid", try await provider.signed(valid, key: "stranger", header: ["kid": providerKeyID]), "id_token_signature"),
                    ("another app's audience", try await provider.idToken(client: "other-app", subject: "eve", nonce: nonce), "id_token_audience"),
                    ("expired", try await provider.signed(expired, key: "provider"), "id_token_expired"),
                    ("issued in the future", try await provider.signed(future, key: "provider"), "id_token_not_yet_valid"),
                    ("no nonce", try await provider.idToken(subject: "eve", nonce: nil), "id_token_nonce"),
                    ("another request's nonce", try await provider.idToken(subject: "eve", nonce: "someone-elses-nonce"), "id_token_nonce"),
                    ("no subject", try await provider.signed(noSubject, key: "provider"), "id_token_subject"),
                    ("not a token", "not.a.token", "id_token_malformed"),
                ]
                #expect(otherAppsAudience != audience)
                for (attack, token, reason) in attacks {
                    let response = try await gateway.idTokenLogin(app, token: token, nonce: nonce)
                    #expect(response.status == .unauthorized, "\(attack): \(text(response))")
                    #expect(identityToken(in: response) == nil, "\(attack) was given a token")
                    #expect(try await gateway.auditReason(of: response) == reason, "\(attack)")
                }

                // A real token for another user than the request names.
                let bob = try await provider.idToken(subject: "bob", nonce: nonce)
                let mismatch = try await gateway.idTokenLogin(app, token: bob, nonce: nonce, user: "corp:alice")
                #expect(mismatch.status == .unauthorized)
                #expect(try await gateway.auditReason(of: mismatch) == "id_token_user_id")
                // The same token under its own user still signs in (the refusal did not spend it).
                #expect(try await gateway.idTokenLogin(app, token: bob, nonce: nonce, user: "corp:bob").status == .ok)
            }
        }
    }

    /// Apple's and Google's documented ID tokens (their header and claims),
    /// signed with stand-in keys served where the presets' key URLs point in
    /// this test: Apple's nonce is the hex SHA-256 of the raw one, Google's
    /// is raw and its issuer comes spelled two ways.
    @Test func appleAndGoogleTokensByTheirPresets() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins()) { gateway in
                let app = try await gateway.createIDTokenApp([
                    [
                        "name": "apple", "preset": "apple", "audiences": ["com.example.app", "com.example.web"],
                        "jwks_url": provider.base + "/apple/keys",
                    ],
                    [
                        "name": "google", "preset": "google", "audiences": ["1234987819200.apps.googleusercontent.com"],
                        "jwks_url": provider.base + "/google/keys", "profile": true,
                    ],
                ])
                let now = Date().timeIntervalSince1970.rounded(.down)
                let raw = "layer-nonce-\(UUID())"
                let hashed = sha256Hex(raw)
                // https://developer.apple.com/documentation/sign_in_with_apple/authenticating-users-with-sign-in-with-apple
                let apple: [String: any Sendable] = [
                    "iss": "https://appleid.apple.com", "aud": "com.example.app", "exp": now + 600, "iat": now,
                    "sub": "001234.56789abcdef0123456789abcdef01.2345", "nonce": hashed, "c_hash": "Dj7m2Y0r3iYS0b2aQ4Zg7Q",
                    "email": "x7r2k@privaterelay.appleid.com", "email_verified": "true", "is_private_email": "true",
                    "auth_time": now, "nonce_supported": true,
                ]
                let appleLogin = try await gateway.idTokenLogin(app, token: try await provider.signed(apple, key: "apple"), nonce: raw)
                #expect(appleLogin.status == .ok, "\(text(appleLogin))")
                #expect(try claims(of: appleLogin)["prn"] as? String == "apple:001234.56789abcdef0123456789abcdef01.2345")

                // Apple's web sign-in: the Services ID is the audience.
                var web = apple
                web["aud"] = "com.example.web"
                web["nonce"] = sha256Hex(raw + "-web")
                #expect(try await gateway.idTokenLogin(app, token: try await provider.signed(web, key: "apple"), nonce: raw + "-web").status == .ok)

                // The raw nonce where Apple hashes it is refused.
                var unhashed = apple
                unhashed["nonce"] = raw + "-2"
                let refused = try await gateway.idTokenLogin(app, token: try await provider.signed(unhashed, key: "apple"), nonce: raw + "-2")
                #expect(refused.status == .unauthorized)
                #expect(try await gateway.auditReason(of: refused) == "id_token_nonce")

                // https://developers.google.com/identity/openid-connect/openid-connect#an-id-tokens-payload
                for (index, issuer) in ["https://accounts.google.com", "accounts.google.com"].enumerated() {
                    let google: [String: any Sendable] = [
                        "iss": issuer, "azp": "1234987819200.apps.googleusercontent.com",
                        "aud": "1234987819200.apps.googleusercontent.com", "sub": "10769150350006150715113082367",
                        "at_hash": "HK6E_P6Dh8Y93mRNtsDB1Q", "hd": "example.com", "email": "jsmith@example.com",
                        "email_verified": true, "iat": now, "exp": now + 3600, "nonce": "\(raw)-g\(index)",
                        "name": "J. Smith", "picture": "https://lh3.googleusercontent.com/a/photo.jpg",
                    ]
                    let googleLogin = try await gateway.idTokenLogin(
                        app, token: try await provider.signed(google, key: "google"), nonce: "\(raw)-g\(index)")
                    #expect(googleLogin.status == .ok, "\(issuer): \(text(googleLogin))")
                    #expect(try claims(of: googleLogin)["prn"] as? String == "google:10769150350006150715113082367")
                    #expect(try claims(of: googleLogin)["display_name"] as? String == "J. Smith")
                }

                // An Apple-signed token claiming Google's issuer: Google's keys do not have Apple's kid.
                var crossed = apple
                crossed["iss"] = "https://accounts.google.com"
                crossed["aud"] = "1234987819200.apps.googleusercontent.com"
                crossed["nonce"] = raw + "-x"
                let crossedLogin = try await gateway.idTokenLogin(app, token: try await provider.signed(crossed, key: "apple"), nonce: raw + "-x")
                #expect(crossedLogin.status == .unauthorized)
                #expect(try await gateway.auditReason(of: crossedLogin) == "id_token_unknown_key")
            }
        }
    }

    /// ES256 keys work as RS256 ones, and a token cannot pick RS256 for an EC
    /// key. Issue 56 (Low): an ECDSA signature has a twin, (r, n − s), that
    /// verifies as well; a captured token sent again with the twin is the same
    /// token, refused as replayed: the replay record covers what the signature covers.
    @Test func anES256ProviderItsTwinSignaturesAndAlgorithmConfusion() async throws {
        try await TestProvider.with { provider in
            try await MemoryGateway.with(plugins: idTokenPlugins()) { gateway in
                let app = try await gateway.createIDTokenApp([
                    ["name": "ec", "issuer": "https://ec.example", "audiences": ["ec-client"], "jwks_url": provider.base + "/ec/keys"]
                ])
                let nonce = "layer-nonce-\(UUID())"
                let claims = providerClaims(issuer: "https://ec.example", audience: "ec-client", subject: "ecu", nonce: nonce)
                let token = try await provider.signed(claims, key: "ec")
                let signedIn = try await gateway.idTokenLogin(app, token: token, nonce: nonce)
                #expect(signedIn.status == .ok, "\(text(signedIn))")
                let twin = try Self.twinSignature(of: token)
                #expect(twin != token)
                let replayed = try await gateway.idTokenLogin(app, token: twin, nonce: nonce)
                #expect(replayed.status == .unauthorized, "\(text(replayed))")
                #expect(try await gateway.auditReason(of: replayed) == "id_token_replayed")

                let confused = try await provider.signed(claims, key: "stranger", header: ["kid": try await provider.keyID(at: "/ec/keys")])
                let refused = try await gateway.idTokenLogin(app, token: confused, nonce: nonce)
                #expect(refused.status == .unauthorized)
                let reason = try await gateway.auditReason(of: refused)
                #expect(reason == "id_token_algorithm", "\(reason ?? "none")")
            }
        }
    }

    /// `token` with its ES256 signature (r, s) written as (r, n − s), n the order of P-256.
    static func twinSignature(of token: String) throws -> String {
        let parts = token.split(separator: ".").map(String.init)
        let signature = Array(try #require(Base64URL.decode(parts[2])))
        try #require(signature.count == 64)
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        var twin = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var digit = Int(order[index]) - Int(signature[32 + index]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            twin[index] = UInt8(digit)
        }
        return parts[0] + "." + parts[1] + "." + Base64URL.encode(Array(signature[..<32]) + twin)
    }
}

func sha256Hex(_ text: String) -> String {
    SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
}
