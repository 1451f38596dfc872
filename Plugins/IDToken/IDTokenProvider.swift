import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayOutbound

/// One identity provider an app accepts ID tokens from (an entry of
/// `plugins.id_token.providers`), read strictly: an unknown key or a bad
/// value is a 400 naming it.
///
/// ```json
/// {"name": "apple", "preset": "apple", "audiences": ["com.example.app", "com.example.web"]}
/// {"name": "corp", "issuer": "https://id.corp.example", "audiences": ["gateway"], "nonce": "raw",
///  "user_id": "subject", "profile": true}
/// ```
struct IDTokenProvider: Sendable, Equatable {
    /// How the token's `nonce` claim is bound to the token request's `nonce`.
    enum NonceRule: String, Sendable {
        /// The claim is the request's nonce itself (Google, most providers).
        case raw
        /// The claim is the lowercase hex SHA-256 of the request's nonce (Apple, Firebase's Apple sign-in).
        case sha256
        /// No nonce is asked for. Replay is still refused: each token is accepted once.
        case none
    }

    /// How the verified `sub` becomes the user id.
    enum UserIDRule: String, Sendable {
        /// `<name>:<sub>` (`apple:001234.abcd…`): two providers' users can never collide.
        case prefixed
        /// `sub` alone: for an app with one provider whose ids it already uses.
        case subject
    }

    /// Where the provider's signing keys are.
    enum KeyLocation: Sendable, Hashable {
        /// A JWK set's URL.
        case jwks(URL)
        /// An OpenID discovery document, whose `jwks_uri` names the JWK set.
        /// Its `issuer` must be one of `issuers`, the provider's (OpenID
        /// Connect Discovery 1.0, section 4.3): a document that speaks for
        /// another issuer is not taken.
        case discovery(URL, issuers: [String])

        var url: URL {
            switch self {
            case .jwks(let url), .discovery(let url, _): url
            }
        }
    }

    /// The known providers' values, which a preset fills in.
    struct Preset: Sendable {
        let issuers: [String]
        let keys: KeyLocation
        let nonce: NonceRule
    }

    static let presets: [String: Preset] = [
        // https://developer.apple.com/documentation/sign_in_with_apple/sign_in_with_apple_rest_api/verifying_a_user
        "apple": Preset(
            issuers: ["https://appleid.apple.com"], keys: .jwks(URL(string: "https://appleid.apple.com/auth/keys")!),
            nonce: .sha256),
        // https://developers.google.com/identity/openid-connect/openid-connect#validatinganidtoken
        "google": Preset(
            issuers: ["https://accounts.google.com", "accounts.google.com"],
            keys: .jwks(URL(string: "https://www.googleapis.com/oauth2/v3/certs")!), nonce: .raw),
    ]

    static let maximumAudiences = 16
    static let nameBytes = 1...32

    let name: String
    /// The `iss` values accepted, exactly (Google writes its issuer two ways).
    let issuers: [String]
    let audiences: [String]
    let keys: KeyLocation
    let nonce: NonceRule
    let userID: UserIDRule
    /// Whether `name` and `picture` fill the token's display name and avatar URL.
    let usesProfileClaims: Bool
    /// Whether a verified email that is the id of one of the app's password
    /// users signs in as that user (`link_verified_email: "password"`); off
    /// by default, and only for this provider: a company's directory may
    /// vouch for its addresses where a public provider's users may change theirs.
    let linksVerifiedEmailToPasswords: Bool
    /// Sign in with Apple's REST API (`apple_api`): an authorization code sent
    /// with the ID token is exchanged for Apple's refresh token, revoked when
    /// the user deletes their account; nil, no code is taken.
    let apple: AppleAPI?

    /// - Parameter passwordsInstalled: whether this gateway has the password plugin (for linking).
    init(_ reader: JSONInput, path: String, environment: AppEnvironment, passwordsInstalled: Bool = false) throws(GatewayError) {
        try reader.rejectUnknown(allowed: [
            "name", "preset", "issuer", "audiences", "jwks_url", "discovery_url", "nonce", "user_id", "profile",
            "link_verified_email", "apple_api",
        ])
        let name = try reader.requiredString("name")
        guard Self.nameBytes.contains(name.utf8.count),
            name.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw .invalidRequest("\(path).name must be 1 to 32 characters of a-z, 0-9, _ and -.")
        }
        self.name = name

        var preset: Preset?
        if let presetName = try reader.string("preset") {
            guard let known = Self.presets[presetName] else {
                throw .invalidRequest("\(path).preset: '\(presetName)' is not a known provider (apple, google).")
            }
            preset = known
            guard !reader.has("issuer") else {
                throw .invalidRequest("\(path).issuer is set by the preset '\(presetName)'; leave it out.")
            }
        }

        if let preset {
            issuers = preset.issuers
        } else {
            guard let issuer = try reader.httpURL("issuer") else {
                throw .invalidRequest("\(path).issuer is required (the provider's issuer URL), or a preset (apple, google).")
            }
            guard environment == .development || issuer.scheme?.lowercased() == "https" else {
                throw .invalidRequest("\(path).issuer must be https in a production app.")
            }
            issuers = [issuer.absoluteString]
        }

        guard let audiences = try reader.strings("audiences", maximumCount: Self.maximumAudiences), !audiences.isEmpty,
            audiences.allSatisfy({ (1...256).contains($0.utf8.count) })
        else {
            throw .invalidRequest(
                "\(path).audiences must list 1 to \(Self.maximumAudiences) client ids the tokens are for (an iOS bundle id, a Services ID, a Google client id).")
        }
        self.audiences = audiences

        let jwksURL = try reader.httpURL("jwks_url")
        let discoveryURL = try reader.httpURL("discovery_url")
        switch (jwksURL, discoveryURL, preset) {
        case (.some, .some, _):
            throw .invalidRequest("\(path): give jwks_url or discovery_url, not both.")
        case (let url?, nil, _):
            keys = .jwks(url)
        case (nil, let url?, _):
            keys = .discovery(url, issuers: issuers)
        case (nil, nil, let preset?):
            keys = preset.keys
        case (nil, nil, nil):
            let issuer = issuers[0]
            keys = .discovery(
                URL(string: (issuer.hasSuffix("/") ? issuer : issuer + "/") + ".well-known/openid-configuration")!,
                issuers: issuers)
        }
        for (field, url) in [("jwks_url", jwksURL), ("discovery_url", discoveryURL)] {
            guard let url else { continue }
            guard environment == .development || url.scheme?.lowercased() == "https" else {
                throw .invalidRequest("\(path).\(field) must be https in a production app.")
            }
            if let refusal = OutboundAddressPolicy.refusal(of: url, field: "\(path).\(field)") { throw refusal }
        }

        if let rule = try reader.string("nonce") {
            guard let parsed = NonceRule(rawValue: rule) else {
                throw .invalidRequest("\(path).nonce: '\(rule)' is not raw, sha256 or none.")
            }
            nonce = parsed
        } else {
            nonce = preset?.nonce ?? .raw
        }
        if let rule = try reader.string("user_id") {
            guard let parsed = UserIDRule(rawValue: rule) else {
                throw .invalidRequest("\(path).user_id: '\(rule)' is not prefixed or subject.")
            }
            userID = parsed
        } else {
            userID = .prefixed
        }
        usesProfileClaims = try reader.bool("profile") ?? false
        switch try reader.string("link_verified_email") {
        case nil:
            linksVerifiedEmailToPasswords = false
        case "password":
            guard passwordsInstalled else {
                throw .invalidRequest("\(path).link_verified_email: the password plugin is not installed on this gateway.")
            }
            linksVerifiedEmailToPasswords = true
        case let other?:
            throw .invalidRequest("\(path).link_verified_email: '\(other)' is not a plugin users can be linked to (only \"password\").")
        }
        apple = try reader.object("apple_api").map { settings throws(GatewayError) in
            try AppleAPI(settings, path: "\(path).apple_api", environment: environment, defaultClientID: audiences[0])
        }
    }

    /// The user id a verified `sub` signs in as.
    func userID(for subject: String) -> String {
        switch userID {
        case .prefixed: "\(name):\(subject)"
        case .subject: subject
        }
    }
}

/// An app's options for the ID-token plugin (`plugins.id_token`).
struct IDTokenOptions: Sendable {
    static let maximumProviders = 8

    let providers: [IDTokenProvider]

    /// Whether any provider links verified emails to password users.
    var linksVerifiedEmailToPasswords: Bool { providers.contains { $0.linksVerifiedEmailToPasswords } }

    /// - Parameter passwordsInstalled: whether this gateway has the password plugin (for linking).
    init(_ options: JSONValue, environment: AppEnvironment, passwordsInstalled: Bool = false) throws(GatewayError) {
        let reader = try JSONInput(options, path: "plugins.id_token")
        if reader.has("link_verified_email") {
            throw .invalidRequest(
                "plugins.id_token.link_verified_email is each provider's own setting now: set it on the providers whose emails may link.")
        }
        try reader.rejectUnknown(allowed: ["providers"])
        guard let entries = try reader.objects("providers", maximumCount: Self.maximumProviders), !entries.isEmpty else {
            throw .invalidRequest("plugins.id_token.providers must list 1 to \(Self.maximumProviders) providers.")
        }
        var providers: [IDTokenProvider] = []
        for (index, entry) in entries.enumerated() {
            let provider = try IDTokenProvider(
                entry, path: "plugins.id_token.providers[\(index)]", environment: environment, passwordsInstalled: passwordsInstalled)
            guard !providers.contains(where: { $0.name == provider.name }) else {
                throw .invalidRequest("plugins.id_token.providers: the name '\(provider.name)' is used twice.")
            }
            guard !providers.contains(where: { !Set($0.issuers).isDisjoint(with: provider.issuers) }) else {
                throw .invalidRequest("plugins.id_token.providers: two providers have the issuer \(provider.issuers[0]); an issuer picks one provider.")
            }
            providers.append(provider)
        }
        self.providers = providers
    }

    /// The provider whose issuer the token names.
    func provider(issuer: String) -> IDTokenProvider? {
        providers.first { $0.issuers.contains(issuer) }
    }
}
