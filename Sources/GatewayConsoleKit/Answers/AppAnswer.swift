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
    /// What the app's users may do for themselves; nil while self-service is off.
    public let selfService: SelfServiceSettings?

    enum CodingKeys: String, CodingKey {
        case appID = "app_id"
        case name, environment, enabled
        case tokenTTLSeconds = "token_ttl_seconds"
        case credentialTypes = "credential_types"
        case plugins
        case rateLimits = "rate_limits"
        case tokenProfiles = "token_profiles"
        case selfService = "self_service"
    }

    /// What the templates show of the app (`app.name`, ...).
    public var templateValues: [String: Any] {
        ["app_id": appID, "name": name, "environment": environment, "enabled": enabled]
    }
}
