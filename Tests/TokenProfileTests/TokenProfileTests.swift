import FirebaseProfile
import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayRuntime
import OIDCProfile
import StreamProfile
import Testing
import TwilioProfile

/// The profiles' own logic, with no database and no network: settings
/// refused with the field named, secrets sealed and redacted, each minter's
/// token passing its own validator and a changed one failing it. Whether
/// the tokens are what the vendors take is for their libraries to say
/// (`TokenProfileVendorTests`).
@Suite struct TokenProfileTests {
    static let pair = try! RSAKeyPair.generate(bits: 2048)
    static let keyID = KeyID(uuid: UUID())
    static let keys = AppSigningKeys(active: (keyID, pair.signer), publicKeys: [keyID: pair.publicKeyPEM])
    /// The profiles besides Layer's, which every registry holds.
    static let offered: [any TokenProfile] = [
        OIDCProfile(issuerBaseURL: URL(string: "https://id.example.com/")!), FirebaseProfile(), StreamProfile(), TwilioProfile(),
    ]
    static let registry = TokenProfileRegistry(offered)
    static let twilio: [String: JSONValue] = [
        "account_sid": .string("AC" + String(repeating: "0a", count: 16)), "api_key_sid": .string("SK" + String(repeating: "1b", count: 16)),
        "api_key_secret": .string("twilio-secret-0123456789"), "chat_service_sid": .string("IS" + String(repeating: "2c", count: 16)),
    ]
    static var serviceAccount: JSONValue {
        .object([
            "type": .string("service_account"), "client_email": .string("signer@example.iam.gserviceaccount.com"),
            "private_key_id": .string("key-1"), "private_key": .string(pair.privateKeyPEM),
        ])
    }
    static var everyProfile: [TokenProfileEntry] {
        [
            .layer, TokenProfileEntry(type: "oidc", options: ["audiences": .array([.string("api")])]),
            TokenProfileEntry(type: "firebase", options: ["service_account": serviceAccount]),
            TokenProfileEntry(type: "stream", options: ["api_key": .string("k"), "api_secret": .string("stream-secret-0123456789")]),
            TokenProfileEntry(type: "twilio", options: twilio),
        ]
    }

    static func app(_ profiles: [TokenProfileEntry]) -> AppSettings {
        AppSettings(
            appID: AppID(uuid: UUID()), name: "t", environment: .development, providerID: ProviderID(uuid: UUID()),
            credentialTypes: ["static"], tokenProfiles: profiles)
    }

    @Test func eachMintedTokenPassesItsProfilesCheckAndAChangedOneFails() throws {
        let app = Self.app(Self.everyProfile)
        let grant = TokenGrant(
            app: app, identity: VerifiedIdentity(userID: "ann", profile: UserProfile([.displayName: "Ann"])), nonce: "n+1/=", issuedAt: 1_800_000_000)
        for (name, slot) in Self.registry.minters(for: app, keys: Self.keys) {
            let minter = try slot.get()
            let compact = try minter.mint(grant)
            let token = try #require(ParsedIdentityToken(compact: compact))
            #expect(minter.problems(in: token).isEmpty, "\(name): \(minter.problems(in: token))")
            let changed = try #require(ParsedIdentityToken(compact: String(compact.dropLast(3)) + (compact.hasSuffix("AAA") ? "BBB" : "AAA")))
            #expect(minter.problems(in: changed).map(\.code).contains("bad_signature"), "\(name) took a changed signature")
        }
    }

    /// OpenID Connect's `email_verified` (Core 5.1) says what is known of the
    /// address: true once a code sent there came back, false while a
    /// self-service account waits for it, absent where nobody proved or
    /// disproved it (an admin typed it) and where there is no address.
    @Test func anOIDCTokenSaysWhetherItsAddressIsVerifiedOnlyWhereThatIsKnown() throws {
        let app = Self.app([TokenProfileEntry(type: "oidc", options: ["audiences": .array([.string("api")])])])
        let minter = try #require(Self.registry.minters(for: app, keys: Self.keys).first { $0.0 == "oidc" }).1.get()
        for (email, verified, expected) in [
            ("ann@example.com", true, JSONValue.bool(true)), ("ann@example.com", false, .bool(false)),
            ("ann@example.com", nil, nil), (nil, true, nil),
        ] as [(String?, Bool?, JSONValue?)] {
            var profile = UserProfile()
            profile[.email] = email
            profile.emailVerified = verified
            let grant = TokenGrant(app: app, identity: VerifiedIdentity(userID: "ann", profile: profile), nonce: "n", issuedAt: 1_800_000_000)
            let token = try #require(ParsedIdentityToken(compact: try minter.mint(grant)))
            #expect(token.claims["email_verified"] == expected, "\(String(describing: email)) \(String(describing: verified))")
        }
    }

    /// Issue 56 (Low): `POST /v1/identity_tokens/validate` answers anyone who
    /// names an app. What it says of a token that is not the app's names the
    /// problem, never a value of the app's settings.
    @Test func aStrangersTokenIsToldWhatIsWrongNeverTheAppsSettings() throws {
        let app = Self.app(Self.everyProfile)
        let stranger = try RSAKeyPair.generate(bits: 2048)
        let garbage = [
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
            try TokenSigningKey(keyID: KeyID(uuid: UUID()), signer: stranger.signer).mint(
                IdentityTokenClaims(issuer: ProviderID(uuid: UUID()), identity: VerifiedIdentity(userID: "x"), nonce: "n", issuedAt: 1_800_000_000,
                                    lifetimeSeconds: 120)),
        ]
        let configured = [
            "0a0a0a0a", "1b1b1b1b", "2c2c2c2c", "twilio-secret", "signer@example.iam.gserviceaccount.com", "key-1",
            "stream-secret", "id.example.com",
        ]
        for (name, slot) in Self.registry.minters(for: app, keys: Self.keys) {
            let minter = try slot.get()
            for compact in garbage {
                let token = try #require(ParsedIdentityToken(compact: compact))
                let said = minter.problems(in: token).map(\.message).joined(separator: " ")
                #expect(!said.isEmpty, "\(name)")
                for value in configured { #expect(!said.contains(value), "\(name) quoted \(value): \(said)") }
            }
        }
    }

    @Test func layersProfileMintsExactlyWhatTheLayerPathMinted() throws {
        let app = Self.app([.layer])
        let identity = VerifiedIdentity(
            userID: "ann", profile: UserProfile([.firstName: "Ann", .displayName: "Ann A.", .email: "ann@example.com"]))
        let minter = try #require(try Self.registry.minters(for: app, keys: Self.keys)["layer"]?.get())
        let ours = try minter.mint(TokenGrant(app: app, identity: identity, nonce: "abc+/=123", issuedAt: 1_800_000_000))
        let before = try TokenSigningKey(keyID: Self.keyID, signer: Self.pair.signer).mint(
            IdentityTokenClaims(issuer: app.providerID, identity: identity, nonce: "abc+/=123", issuedAt: 1_800_000_000, lifetimeSeconds: 120))
        #expect(ours == before)
        #expect(minter.keyID == Self.keyID)
    }

    @Test(arguments: [
        ("oidc", ["audiences": JSONValue.array([])], "audiences"),
        ("oidc", ["audiences": .array([.string("api")]), "lifetime_seconds": .number(7200)], "lifetime_seconds"),
        ("oidc", ["audiences": .array([.string("api"), .string("api")])], "audiences"),
        ("stream", ["api_key": .string("k"), "api_secret": .string("********")], "api_secret"),
        ("stream", ["api_key": .string("k"), "api_secret": .string("short")], "api_secret"),
        ("stream", ["api_key": .string("k"), "api_secret": .string("stream-secret-0123456789"), "extra": .bool(true)], "extra"),
        ("twilio", twilio.merging(["account_sid": .string("AC123")]) { $1 }, "account_sid"),
        ("twilio", twilio.merging(["chat_service_sid": .string("SK" + String(repeating: "2c", count: 16))]) { $1 }, "chat_service_sid"),
        ("twilio", twilio.merging(["lifetime_seconds": .number(86_401)]) { $1 }, "lifetime_seconds"),
        ("firebase", ["service_account": .object(["type": .string("service_account")])], "client_email"),
        ("firebase", ["service_account": .string("********")], "service_account"),
        ("firebase", ["service_account": serviceAccount, "claims": .object(["iss": .string("me")])], "claims.iss"),
        ("firebase", ["service_account": serviceAccount, "claims": .object(["sign_in_acr": .string("aal9")])], "claims.sign_in_acr"),
        ("firebase", ["service_account": serviceAccount, "sign_in_claims": .string("yes")], "sign_in_claims"),
        ("firebase", ["service_account": serviceAccount, "lifetime_seconds": .number(3601)], "lifetime_seconds"),
        ("layer", ["lifetime_seconds": .number(60)], "lifetime_seconds"),
    ] as [(String, [String: JSONValue], String)])
    func badSettingsAreRefusedNamingTheField(_ type: String, _ settings: [String: JSONValue], _ field: String) {
        let app = Self.app([TokenProfileEntry(type: type, options: settings)])
        #expect {
            try Self.registry.check(app)
        } throws: { error in
            let error = error as? GatewayError
            return error?.code == .invalidRequest && error?.message.contains(field) == true
        }
    }

    @Test func theListItselfIsChecked() {
        for profiles in [[], [TokenProfileEntry.layer, .layer], [TokenProfileEntry(type: "google")], Array(repeating: TokenProfileEntry.layer, count: 9)] {
            #expect(throws: GatewayError.self) { try Self.registry.check(Self.app(profiles)) }
        }
        // A missing key is no fault of the settings: they are accepted, and the token answers 503 until a key is active.
        let keyless = Self.app([.layer, TokenProfileEntry(type: "oidc", options: ["audiences": .array([.string("api")])])])
        #expect(throws: Never.self) { try Self.registry.check(keyless) }
        for (_, slot) in Self.registry.minters(for: keyless, keys: AppSigningKeys.none) {
            #expect(throws: GatewayError(.noSigningKey, .unavailable, "This app has no active signing key; an operator must activate one.")) {
                try slot.get()
            }
        }
        let noIssuer = TokenProfileRegistry([OIDCProfile(issuerBaseURL: nil)])
        #expect(throws: GatewayError.self) { try noIssuer.check(keyless) }
    }

    @Test func secretsAreSealedBoundToTheirAppAndRedacted() throws {
        let registry = PluginRegistry([], profiles: Self.offered)
        let masterKey = try MasterKey(base64: MasterKey.generateBase64())
        let app = Self.app(Self.everyProfile)
        let sealed = try registry.sealingSecrets(of: app, with: masterKey)
        let stored = String(decoding: try JSONEncoder().encode(sealed.tokenProfiles), as: UTF8.self)
        for secret in ["stream-secret-0123456789", "twilio-secret-0123456789", "PRIVATE KEY"] {
            #expect(!stored.contains(secret), "\(secret) stored in the clear")
        }
        #expect(try registry.openingSecrets(of: sealed, with: masterKey).tokenProfiles.map(\.type) == app.tokenProfiles.map(\.type))
        let opened = try registry.openingSecrets(of: sealed, with: masterKey)
        #expect(throws: Never.self) { try Self.registry.check(opened) }
        var moved = sealed
        moved.appID = AppID(uuid: UUID())
        #expect(throws: (any Error).self) { try registry.openingSecrets(of: moved, with: masterKey) }
        let shown = String(decoding: try JSONEncoder().encode(registry.redacted(sealed.tokenProfiles)), as: UTF8.self)
        #expect(!shown.contains("sealed:") && shown.contains("********"))
    }

    /// Each profile's declaration takes every setting its minter takes
    /// (every profile's good settings pass it), and refuses what it declares
    /// against, naming the setting as the profile's own messages do.
    @Test func theDeclarationsTakeWhatTheProfilesTake() throws {
        #expect(throws: Never.self) { try Self.registry.checkDeclared(Self.everyProfile) }
        let firebaseAsText = TokenProfileEntry(type: "firebase", options: ["service_account": .string(String(decoding: JSONCoding.bytes(of: Self.serviceAccount, indented: false), as: UTF8.self))])
        #expect(throws: Never.self) { try Self.registry.checkDeclared([firebaseAsText]) }
        for (type, settings, field) in [
            ("stream", ["api_key": JSONValue.string("k"), "api_secret": .string("short")], "token_profiles.stream.api_secret"),
            ("stream", ["api_key": .string("k"), "api_secret": .string("stream-secret-0123456789"), "extra": .bool(true)], "token_profiles.stream.extra"),
            ("twilio", Self.twilio.merging(["account_sid": .string("AC123")]) { $1 }, "token_profiles.twilio.account_sid"),
            ("oidc", ["audiences": .array([.string("api"), .string("api")])], "token_profiles.oidc.audiences"),
            ("layer", ["lifetime_seconds": .number(60)], "token_profiles.layer.lifetime_seconds"),
        ] as [(String, [String: JSONValue], String)] {
            #expect {
                try Self.registry.checkDeclared([TokenProfileEntry(type: type, options: settings)])
            } throws: { error in
                (error as? GatewayError)?.message.hasPrefix(field) == true
            }
        }
    }

    /// ******** keeps the stored secret of the profile of the same type, and
    /// only that: a profile listed for the first time must be given its secret.
    @Test func theMarkerKeepsTheStoredSecretOfTheSameProfileOnly() throws {
        let stored = [TokenProfileEntry.layer, TokenProfileEntry(type: "stream", options: ["api_key": .string("k"), "api_secret": .string("stream-secret-0123456789")])]
        let sentBack = [
            TokenProfileEntry(type: "stream", options: ["api_key": .string("k2"), "api_secret": .string(RedactedSecret.marker)]),
            TokenProfileEntry(type: "twilio", options: Self.twilio.merging(["api_key_secret": .string(RedactedSecret.marker)]) { $1 }),
        ]
        let kept = Self.registry.keepingSecrets(sentBack, stored: stored)
        #expect(kept[0].options["api_secret"] == .string("stream-secret-0123456789") && kept[0].options["api_key"] == .string("k2"))
        #expect(kept[1].options["api_key_secret"] == .string(RedactedSecret.marker))
        #expect {
            try Self.registry.checkDeclared(kept)
        } throws: { error in
            (error as? GatewayError)?.message.hasPrefix("token_profiles.twilio.api_key_secret must be the secret itself") == true
        }
    }

    @Test func aUserIDFirebaseCannotTakeIsRefusedBeforeAnyRow() throws {
        let app = Self.app([TokenProfileEntry(type: "firebase", options: ["service_account": Self.serviceAccount])])
        let minter = try #require(try Self.registry.minters(for: app, keys: AppSigningKeys.none)["firebase"]?.get())
        let long = TokenGrant(app: app, identity: VerifiedIdentity(userID: String(repeating: "é", count: 129)), nonce: "n", issuedAt: 1)
        #expect(minter.refusal(for: long)?.code == .invalidRequest)
        let fits = TokenGrant(app: app, identity: VerifiedIdentity(userID: String(repeating: "é", count: 128)), nonce: "n", issuedAt: 1)
        #expect(minter.refusal(for: fits) == nil)
    }
}
