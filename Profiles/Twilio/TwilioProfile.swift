import Crypto
public import GatewayCore
public import GatewayPluginKit

/// A Twilio Access Token with a Conversations (chat) grant, as the `twilio`
/// SDK's `AccessToken` with a `ChatGrant` writes it: header
/// `cty: twilio-fpa;v=1`, HS256 under the API key's secret; claims `jti`
/// (`<API key SID>-<issue time>`), `grants` (`identity` = the user id,
/// `chat.service_sid`), `iss` (the API key SID), `sub` (the account SID),
/// `nbf` (the issue time, as the SDK sets it) and `exp`.
///
/// Settings: `{"type": "twilio", "account_sid": "AC…", "api_key_sid": "SK…",
/// "api_key_secret": "...", "chat_service_sid": "IS…", "lifetime_seconds": 3600}`;
/// the secret is write-only; Twilio refuses tokens living over 24 hours.
public struct TwilioProfile: TokenProfile {
    static let lifetimes = 30...86_400

    public static func make(_ setup: PluginSetup) -> TwilioProfile? { TwilioProfile() }

    public init() {}

    public var name: String { "twilio" }

    public var optionFields: [OptionField] {
        func sid(_ prefix: String) -> OptionShape {
            .text(TextRule(pattern: ("^\(prefix)[0-9a-f]{32}$", meaning: "\(prefix) followed by 32 lowercase hexadecimal digits")))
        }
        return [
            OptionField("account_sid", sid("AC"), required: true),
            OptionField("api_key_sid", sid("SK"), required: true),
            OptionField("api_key_secret", .secret(16...256), required: true, description: "Write-only."),
            OptionField("chat_service_sid", sid("IS"), required: true),
            OptionField("lifetime_seconds", .integer(Self.lifetimes, default: 3600)),
        ]
    }

    public func makeMinter(
        for app: AppSettings, settings: [String: JSONValue], keys: AppSigningKeys
    ) throws(GatewayError) -> any TokenMinter {
        let reader = JSONInput(members: settings, path: "token_profiles.twilio")
        try reader.rejectUnknown(allowed: ["account_sid", "api_key_sid", "api_key_secret", "chat_service_sid", "lifetime_seconds"])
        let account = try Self.sid(reader, "account_sid", prefix: "AC")
        let apiKey = try Self.sid(reader, "api_key_sid", prefix: "SK")
        let service = try Self.sid(reader, "chat_service_sid", prefix: "IS")
        let secret = try reader.secret("api_key_secret", bytes: 16...256)
        let lifetime = try reader.integer("lifetime_seconds", in: Self.lifetimes) ?? 3600
        return Minter(
            accountSID: account, apiKeySID: apiKey, serviceSID: service, secret: SymmetricKey(data: Array(secret.utf8)),
            lifetimeSeconds: Int64(lifetime))
    }

    public func mapSecrets(
        _ settings: [String: JSONValue], _ transform: (_ name: String, _ value: String) throws -> String
    ) rethrows -> [String: JSONValue] {
        guard case .object(let mapped) = try JSONValue.object(settings).mappingStrings(at: ["api_key_secret"], transform) else { return settings }
        return mapped
    }

    /// A Twilio SID: its two-letter prefix and 32 lowercase hex digits.
    static func sid(_ reader: JSONInput, _ key: String, prefix: String) throws(GatewayError) -> String {
        guard let value = try reader.string(key), value.utf8.count == 34, value.hasPrefix(prefix),
            value.utf8.dropFirst(2).allSatisfy({ $0.isLowercaseHexDigit })
        else {
            throw .invalidRequest("token_profiles.twilio.\(key) must be \(prefix) followed by 32 lowercase hexadecimal digits.")
        }
        return value
    }

    struct Minter: TokenMinter {
        static let headerPrefix = CompactJWS.headerPrefix(["cty": "twilio-fpa;v=1", "typ": "JWT", "alg": "HS256"])

        let accountSID: String
        let apiKeySID: String
        let serviceSID: String
        let secret: SymmetricKey
        let lifetimeSeconds: Int64

        var keyID: KeyID? { nil }

        func mint(_ grant: TokenGrant) throws -> String {
            var chat = JSONObjectWriter(reservingCapacity: 64)
            chat.add("service_sid", serviceSID)
            var grants = JSONObjectWriter(reservingCapacity: 128)
            grants.add("chat", json: chat.finish())
            grants.add("identity", grant.identity.userID)
            var claims = JSONObjectWriter(reservingCapacity: 256)
            claims.add("jti", "\(apiKeySID)-\(grant.issuedAt)")
            claims.add("grants", json: grants.finish())
            claims.add("iss", apiKeySID)
            claims.add("exp", grant.issuedAt + lifetimeSeconds)
            claims.add("nbf", grant.issuedAt)
            claims.add("sub", accountSID)
            return CompactJWS.encode(headerPrefix: Self.headerPrefix, claims: claims.finish(), sign: CompactJWS.hs256(secret))
        }

        func problems(in token: ParsedIdentityToken) -> [TokenValidationReport.Problem] {
            var checks = TokenChecks(token)
            checks.signature(token.hasValidHS256Signature(secret: secret))
            checks.header("alg", is: "HS256")
            checks.header("cty", is: "twilio-fpa;v=1")
            checks.claim("iss", matchesSetting: apiKeySID)
            checks.claim("sub", matchesSetting: accountSID)
            checks.nonEmptyClaim("jti", "the token's id")
            if !Self.grantsHold(token.claims["grants"], serviceSID: serviceSID) {
                checks.add("bad_grants", "The grants claim must hold identity (the user id) and this app's chat.service_sid.")
            }
            checks.times(start: "nbf", maximumLifetime: Int64(TwilioProfile.lifetimes.upperBound))
            return checks.problems
        }

        /// `{"identity": <non-empty>, "chat": {"service_sid": serviceSID}}`.
        static func grantsHold(_ grants: JSONValue?, serviceSID: String) -> Bool {
            guard case .object(let grants)? = grants, let identity = grants["identity"]?.stringValue, !identity.isEmpty,
                case .object(let chat)? = grants["chat"]
            else { return false }
            return chat["service_sid"] == .string(serviceSID)
        }
    }
}

extension UInt8 {
    fileprivate var isLowercaseHexDigit: Bool { (0x30...0x39).contains(self) || (0x61...0x66).contains(self) }
}
