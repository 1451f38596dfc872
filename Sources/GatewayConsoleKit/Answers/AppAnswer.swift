public import GatewayCore

/// An app as the admin API answers it (openapi.yaml, `App`): what the
/// console's pages read of it.
public struct AppAnswer: Decodable, Sendable {
    public let appID: String
    public let name: String
    public let environment: String
    public let enabled: Bool
    public let tokenTTLSeconds: Int
    public let credentialTypes: [String]
    /// Each plugin's options, by credential type, secrets redacted.
    public let plugins: [String: JSONValue]
    public let rateLimits: JSONValue
    public let tokenProfiles: JSONValue
    /// The settings `null` turns off, as the API answers them; nil while off.
    let sessions: JSONValue?
    let mfa: JSONValue?
    let selfService: JSONValue?

    enum CodingKeys: String, CodingKey {
        case appID = "app_id"
        case name, environment, enabled
        case tokenTTLSeconds = "token_ttl_seconds"
        case credentialTypes = "credential_types"
        case plugins
        case rateLimits = "rate_limits"
        case tokenProfiles = "token_profiles"
        case sessions, mfa
        case selfService = "self_service"
    }

    /// A list or map member of the app's settings (`token_profiles`, `rate_limits`) by its name.
    public func member(_ name: String) -> JSONValue {
        switch name {
        case CodingKeys.tokenProfiles.rawValue: tokenProfiles
        case CodingKeys.rateLimits.rawValue: rateLimits
        default: .null
        }
    }

    /// One of the settings `null` turns off (`sessions`, `mfa`,
    /// `self_service`) by its member; nil while it is off.
    public func setting(_ member: String) -> JSONValue? {
        switch member {
        case CodingKeys.sessions.rawValue: sessions
        case CodingKeys.mfa.rawValue: mfa
        case CodingKeys.selfService.rawValue: selfService
        default: nil
        }
    }

    /// What the templates show of the app (`app.name`, ...).
    public var templateValues: [String: Any] {
        ["app_id": appID, "name": name, "environment": environment, "enabled": enabled]
    }
}
