public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import Hummingbird

/// An OpenID Connect ID token (OpenID Connect Core §2), signed RS256 with the
/// app's own key (today's key store and rotation): `iss` (the app's issuer),
/// `sub` (the user id), `aud` (the app's client ids), `iat`, `exp`,
/// `auth_time`, `nonce` (the request's), and `name`, `given_name`,
/// `family_name`, `picture` where the credential check knows them.
///
/// Each app is an issuer of its own, `<oidc.issuer_base_url>/v1/apps/<uuid>`,
/// with its discovery document under `/.well-known/openid-configuration` and
/// its key set (only its own keys) at `jwks.json`, so a relying party finds
/// and checks its tokens by the `iss` alone.
///
/// Settings: `{"type": "oidc", "audiences": ["my-api"], "lifetime_seconds": 300}`;
/// `lifetime_seconds` defaults to the app's `token_ttl_seconds`.
public struct OIDCProfile: TokenProfile {
    static let lifetimes = 30...3600
    static let maximumAudiences = 8

    /// The standard claim of each profile field (OpenID Connect Core 1.0,
    /// section 5.1); a field not listed here goes under its own name.
    static let standardClaims: [ProfileField: String] = [
        .firstName: "given_name", .lastName: "family_name", .displayName: "name", .avatarURL: "picture",
    ]

    static func claimName(of field: ProfileField) -> String { standardClaims[field] ?? field.name }

    /// Every claim a token of this profile may carry, as the discovery
    /// document's `claims_supported` lists them: the fixed ones, and one for each profile field.
    static let claimsSupported = ["iss", "sub", "aud", "iat", "exp", "auth_time", "amr", "acr", "nonce"]
        + ProfileField.allCases.map(claimName(of:)) + ["email_verified"]

    /// Where the apps' issuers live: `oidc.issuer_base_url`, the gateway's public URL.
    let issuerBaseURL: URL?

    public static func make(_ setup: PluginSetup) -> OIDCProfile? {
        OIDCProfile(issuerBaseURL: setup.settings.httpURL("oidc.issuer_base_url"))
    }

    public init(issuerBaseURL: URL?) {
        self.issuerBaseURL = issuerBaseURL
    }

    public var name: String { "oidc" }

    public var unavailableReason: String? {
        issuerBaseURL == nil ? "oidc.issuer_base_url (GATEWAY_OIDC_ISSUER_BASE_URL), the gateway's public URL, is not set" : nil
    }

    /// The app's issuer identifier: the base URL, no trailing slash, then `/v1/apps/<uuid>`.
    static func issuer(of appID: AppID, base: URL) -> String {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text + "/v1/apps/" + appID.uuid.lowercasedText
    }

    public var optionFields: [OptionField] {
        [
            OptionField(
                "audiences",
                .list(
                    of: .text(TextRule(length: 1...256, pattern: ("^[!-~]+$", meaning: "visible ASCII"))), count: 1...Self.maximumAudiences,
                    unique: true),
                required: true),
            OptionField(
                "lifetime_seconds", .integer(Self.lifetimes), description: "The app's token_ttl_seconds when absent."),
        ]
    }

    public func makeMinter(
        for app: AppSettings, settings: [String: JSONValue], keys: AppSigningKeys
    ) throws(GatewayError) -> any TokenMinter {
        let reader = JSONInput(members: settings, path: "token_profiles.oidc")
        try reader.rejectUnknown(allowed: ["audiences", "lifetime_seconds"])
        guard let audiences = try reader.strings("audiences", maximumCount: Self.maximumAudiences), !audiences.isEmpty,
            Set(audiences).count == audiences.count,
            audiences.allSatisfy({ (1...256).contains($0.utf8.count) && $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } })
        else {
            throw .invalidRequest(
                "token_profiles.oidc.audiences must list 1 to \(Self.maximumAudiences) different client ids (visible ASCII, at most 256 bytes each).")
        }
        let lifetime = try reader.integer("lifetime_seconds", in: Self.lifetimes) ?? app.tokenTTLSeconds
        guard let issuerBaseURL else {
            throw .invalidRequest(
                "token_profiles: oidc needs the gateway's public URL; an operator must set oidc.issuer_base_url (GATEWAY_OIDC_ISSUER_BASE_URL).")
        }
        let active = try keys.requireActive()
        return Minter(
            issuer: Self.issuer(of: app.appID, base: issuerBaseURL), audiences: audiences, lifetimeSeconds: Int64(lifetime),
            keyID: active.keyID, signer: active.signer, keys: keys)
    }

    public func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices) {
        OIDCDiscoveryController(issuerBaseURL: issuerBaseURL, services: services).addRoutes(to: router)
    }

    struct Minter: TokenMinter {
        let issuer: String
        let audiences: [String]
        let lifetimeSeconds: Int64
        let keyID: KeyID?
        let signer: any RS256Signer
        /// Every key of the app, to check tokens signed before a rotation.
        let keys: AppSigningKeys
        let headerPrefix: [UInt8]

        init(
            issuer: String, audiences: [String], lifetimeSeconds: Int64, keyID: KeyID, signer: any RS256Signer, keys: AppSigningKeys
        ) {
            self.keys = keys
            self.issuer = issuer
            self.audiences = audiences
            self.lifetimeSeconds = lifetimeSeconds
            self.keyID = keyID
            self.signer = signer
            headerPrefix = CompactJWS.headerPrefix(["alg": "RS256", "typ": "JWT", "kid": keyID.description])
        }

        func mint(_ grant: TokenGrant) throws -> String {
            let identity = grant.identity
            var claims = JSONObjectWriter(reservingCapacity: 512)
            claims.add("iss", issuer)
            claims.add("sub", identity.userID)
            // One audience is a string (the common form), several an array (Core §2).
            if audiences.count == 1 { claims.add("aud", audiences[0]) } else { claims.add("aud", audiences) }
            claims.add("iat", grant.issuedAt)
            claims.add("exp", grant.issuedAt + lifetimeSeconds)
            // The sign-in's time, which a refresh keeps, and how the user proved who they are (RFC 8176).
            claims.add("auth_time", grant.authTime)
            if !grant.methods.isEmpty { claims.add("amr", grant.methods) }
            if let level = grant.assuranceLevel { claims.add("acr", level) }
            claims.add("nonce", grant.nonce)
            for (field, value) in identity.profile.fields { claims.add(OIDCProfile.claimName(of: field), value) }
            // Core §5.1: said only where the address is there and whether it was proven is known.
            if identity.profile[.email] != nil, let verified = identity.profile.emailVerified { claims.add("email_verified", verified) }
            return try CompactJWS.encode(headerPrefix: headerPrefix, claims: claims.finish(), sign: signer.sign)
        }

        func problems(in token: ParsedIdentityToken) -> [TokenValidationReport.Problem] {
            var checks = TokenChecks(token)
            checks.signature(token.header["alg"] == .string("RS256") && keys.signed(token))
            checks.header("alg", is: "RS256")
            checks.claim("iss", matchesSetting: issuer)
            checks.nonEmptyClaim("sub", "the user id")
            checks.nonEmptyClaim("nonce", "the request's nonce")
            let audience: [String]
            switch token.claims["aud"] {
            case .string(let one)?: audience = [one]
            case .array(let many)?: audience = many.compactMap(\.stringValue)
            default: audience = []
            }
            if !audience.contains(where: audiences.contains) {
                checks.add("bad_aud", "The aud claim must name one of this app's audiences.")
            }
            checks.times(maximumLifetime: Int64(OIDCProfile.lifetimes.upperBound))
            return checks.problems
        }
    }
}
