import Foundation
public import GatewayCore
public import GatewayPluginKit

/// A Firebase Auth custom token, as `firebase-admin`'s `create_custom_token`
/// signs it: RS256 with the service account's key, header `kid` = its
/// `private_key_id`; claims `iss` = `sub` = its `client_email`, `aud` = the
/// Identity Toolkit audience, `uid` (the user id, at most 128 characters),
/// `iat`, `exp` (at most an hour later) and, when set, the developer `claims`.
/// The app exchanges it for a Firebase ID token with `signInWithCustomToken`.
///
/// Settings: `{"type": "firebase", "service_account": {…the downloaded JSON…},
/// "lifetime_seconds": 3600, "claims": {"tier": "gold"}, "sign_in_claims": true}`.
/// The service account is sealed whole and write-only: answers show it as
/// `********`. With `sign_in_claims` (off by default, so tokens stay as they
/// were), the developer claims also say how the user signed in:
/// `sign_in_amr` (RFC 8176 values) and `sign_in_acr` (`aal1`, `aal2`), under
/// those names since Firebase reserves `amr` and `acr`; the Firebase ID
/// token carries them for security rules (`request.auth.token.sign_in_acr`).
public struct FirebaseProfile: TokenProfile {
    static let audience = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
    static let lifetimes = 30...3600
    static let maximumUIDCharacters = 128
    /// Claim names firebase-admin refuses among developer claims.
    static let reservedClaims: Set<String> = [
        "acr", "amr", "at_hash", "aud", "auth_time", "azp", "cnf", "c_hash", "exp", "firebase", "iat", "iss", "jti", "nbf",
        "nonce", "sub",
    ]
    static let path = "token_profiles.firebase"
    /// The developer claims `sign_in_claims` adds, which an app's own may not name.
    static let signInClaims: Set<String> = ["sign_in_amr", "sign_in_acr"]

    public static func make(_ setup: PluginSetup) -> FirebaseProfile? { FirebaseProfile() }

    public init() {}

    public var name: String { "firebase" }

    public var optionFields: [OptionField] {
        [
            OptionField(
                "service_account", .secretDocument(maximumLength: 16_384), required: true,
                description:
                    "The service account's JSON key file as an object (client_email, private_key_id, private_key); read back as \"********\"."
            ),
            OptionField("lifetime_seconds", .integer(Self.lifetimes, default: Self.lifetimes.upperBound)),
            OptionField(
                "claims", .map(of: .text(), count: 0...Int.max, key: "claim"),
                description: "Developer claims, at most 1000 bytes; reserved names refused."),
            OptionField(
                "sign_in_claims", .boolean(default: false),
                description:
                    "When true, the developer claims also carry sign_in_amr (RFC 8176 values) and sign_in_acr (aal1, aal2): how the user signed in, under names Firebase does not reserve."
            ),
        ]
    }

    public func makeMinter(
        for app: AppSettings, settings: [String: JSONValue], keys: AppSigningKeys
    ) throws(GatewayError) -> any TokenMinter {
        let reader = JSONInput(members: settings, path: Self.path)
        try reader.rejectUnknown(allowed: ["service_account", "lifetime_seconds", "claims", "sign_in_claims"])
        let account = try ServiceAccount(settings["service_account"], makeSigner: keys.makeSigner)
        let lifetime = try reader.integer("lifetime_seconds", in: Self.lifetimes) ?? Self.lifetimes.upperBound
        var developerClaims: [(String, String)] = []
        if let claims = try reader.object("claims") {
            for name in claims.members.keys.sorted() {
                guard !Self.reservedClaims.contains(name), !Self.signInClaims.contains(name), (1...64).contains(name.utf8.count)
                else {
                    throw .invalidRequest("\(Self.path).claims.\(name) is a reserved or overlong claim name.")
                }
                developerClaims.append((name, try claims.requiredString(name)))
            }
            guard developerClaims.reduce(0, { $0 + $1.0.utf8.count + $1.1.utf8.count }) <= 1000 else {
                throw .invalidRequest("\(Self.path).claims must total at most 1000 bytes.")
            }
        }
        return Minter(
            account: account, lifetimeSeconds: Int64(lifetime), developerClaims: developerClaims,
            carriesSignIn: try reader.bool("sign_in_claims") ?? false)
    }

    /// The service account is one secret: sealed as its JSON text.
    public func mapSecrets(
        _ settings: [String: JSONValue], _ transform: (_ name: String, _ value: String) throws -> String
    ) rethrows -> [String: JSONValue] {
        var mapped = settings
        switch settings["service_account"] {
        case .string(let text)?:
            mapped["service_account"] = .string(try transform("service_account", text))
        case let value? where value != .null:
            mapped["service_account"] = .string(try transform("service_account", ServiceAccount.text(of: value)))
        default:
            break
        }
        return mapped
    }

    struct Minter: TokenMinter {
        let account: ServiceAccount
        let headerPrefix: [UInt8]
        let lifetimeSeconds: Int64
        let developerClaims: [(String, String)]
        /// Whether the developer claims say how the user signed in (`sign_in_claims`).
        let carriesSignIn: Bool

        init(account: ServiceAccount, lifetimeSeconds: Int64, developerClaims: [(String, String)], carriesSignIn: Bool) {
            self.account = account
            self.lifetimeSeconds = lifetimeSeconds
            self.developerClaims = developerClaims
            self.carriesSignIn = carriesSignIn
            headerPrefix = CompactJWS.headerPrefix(["alg": "RS256", "typ": "JWT", "kid": account.privateKeyID])
        }

        var keyID: KeyID? { nil }

        func refusal(for grant: TokenGrant) -> GatewayError? {
            guard grant.identity.userID.count > FirebaseProfile.maximumUIDCharacters else { return nil }
            return .invalidRequest(
                "This user id is longer than the \(FirebaseProfile.maximumUIDCharacters) characters a Firebase uid may have.")
        }

        func mint(_ grant: TokenGrant) throws -> String {
            var claims = JSONObjectWriter(reservingCapacity: 512)
            claims.add("iss", account.clientEmail)
            claims.add("sub", account.clientEmail)
            claims.add("aud", FirebaseProfile.audience)
            claims.add("uid", grant.identity.userID)
            claims.add("iat", grant.issuedAt)
            claims.add("exp", grant.issuedAt + lifetimeSeconds)
            let signIn = carriesSignIn ? grant.assuranceLevel.map { (methods: grant.methods, level: $0) } : nil
            if !developerClaims.isEmpty || signIn != nil {
                var developer = JSONObjectWriter(reservingCapacity: 256)
                for (name, value) in developerClaims { developer.add(name, value) }
                if let signIn {
                    developer.add("sign_in_amr", signIn.methods)
                    developer.add("sign_in_acr", signIn.level)
                }
                claims.add("claims", json: developer.finish())
            }
            return try CompactJWS.encode(headerPrefix: headerPrefix, claims: claims.finish(), sign: account.signer.sign)
        }

        func problems(in token: ParsedIdentityToken) -> [TokenValidationReport.Problem] {
            var checks = TokenChecks(token)
            checks.signature(token.header["alg"] == .string("RS256") && token.hasValidSignature(publicKeyPEM: account.publicKeyPEM))
            checks.header("alg", is: "RS256")
            checks.header("kid", matchesSetting: account.privateKeyID)
            checks.claim("iss", matchesSetting: account.clientEmail)
            checks.claim("sub", matchesSetting: account.clientEmail)
            checks.claim("aud", is: FirebaseProfile.audience)
            if let uid = checks.nonEmptyClaim("uid", "the user id"), uid.count > FirebaseProfile.maximumUIDCharacters {
                checks.add("bad_uid", "The uid claim must be at most \(FirebaseProfile.maximumUIDCharacters) characters.")
            }
            checks.times(maximumLifetime: Int64(FirebaseProfile.lifetimes.upperBound))
            return checks.problems
        }
    }
}
