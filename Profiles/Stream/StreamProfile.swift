import Crypto
public import GatewayCore
public import GatewayPluginKit

/// A Stream Chat user token, as the `stream-chat` SDK's `create_token`
/// makes it: HS256 under the app's Stream API secret, claims `user_id`,
/// `iat` and `exp`. The SDK leaves `exp` out unless asked, which makes a
/// token that never expires; ours always carries one.
///
/// Settings: `{"type": "stream", "api_key": "...", "api_secret": "...", "lifetime_seconds": 3600}`;
/// the secret is write-only, `lifetime_seconds` defaults to the app's `token_ttl_seconds`.
public struct StreamProfile: TokenProfile {
    static let lifetimes = 30...86_400

    public static func make(_ setup: PluginSetup) -> StreamProfile? { StreamProfile() }

    public init() {}

    public var name: String { "stream" }

    public var optionFields: [OptionField] {
        [
            OptionField("api_key", .text(TextRule(length: 1...64, pattern: ("^[!-~]+$", meaning: "visible ASCII"))), required: true),
            OptionField("api_secret", .secret(16...256), required: true, description: "Write-only."),
            OptionField(
                "lifetime_seconds", .integer(Self.lifetimes), description: "The app's token_ttl_seconds when absent."),
        ]
    }

    public func makeMinter(
        for app: AppSettings, settings: [String: JSONValue], keys: AppSigningKeys
    ) throws(GatewayError) -> any TokenMinter {
        let reader = JSONInput(members: settings, path: "token_profiles.stream")
        try reader.rejectUnknown(allowed: ["api_key", "api_secret", "lifetime_seconds"])
        _ = try reader.token(
            "api_key", bytes: 1...64, allowed: { $0 > 0x20 && $0 < 0x7F }, what: "the app's Stream API key (visible ASCII)")
        let secret = try reader.secret("api_secret", bytes: 16...256)
        let lifetime = try reader.integer("lifetime_seconds", in: Self.lifetimes) ?? app.tokenTTLSeconds
        return Minter(secret: SymmetricKey(data: Array(secret.utf8)), lifetimeSeconds: Int64(lifetime))
    }

    public func mapSecrets(
        _ settings: [String: JSONValue], _ transform: (_ name: String, _ value: String) throws -> String
    ) rethrows -> [String: JSONValue] {
        guard case .object(let mapped) = try JSONValue.object(settings).mappingStrings(at: ["api_secret"], transform) else { return settings }
        return mapped
    }

    struct Minter: TokenMinter {
        static let headerPrefix = CompactJWS.headerPrefix(["alg": "HS256", "typ": "JWT"])

        let secret: SymmetricKey
        let lifetimeSeconds: Int64

        var keyID: KeyID? { nil }

        func mint(_ grant: TokenGrant) throws -> String {
            var claims = JSONObjectWriter(reservingCapacity: 128)
            claims.add("user_id", grant.identity.userID)
            claims.add("iat", grant.issuedAt)
            claims.add("exp", grant.issuedAt + lifetimeSeconds)
            return CompactJWS.encode(headerPrefix: Self.headerPrefix, claims: claims.finish(), sign: CompactJWS.hs256(secret))
        }

        func problems(in token: ParsedIdentityToken) -> [TokenValidationReport.Problem] {
            var checks = TokenChecks(token)
            checks.signature(token.hasValidHS256Signature(secret: secret))
            checks.header("alg", is: "HS256")
            checks.nonEmptyClaim("user_id", "the user id")
            checks.times(maximumLifetime: Int64(StreamProfile.lifetimes.upperBound))
            return checks.problems
        }
    }
}
