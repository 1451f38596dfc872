/// One tenant's stored settings: who it is, how long its tokens live, and
/// which credential plugins it uses with what options.
public struct AppSettings: Sendable, Equatable {
    public static let defaultTokenTTLSeconds = 120
    /// A nonce lives 10 minutes, so a longer token is never useful; under 30 s
    /// clock skew between the gateway and Layer starts to bite.
    public static let tokenTTLRange = 30...600

    public var appID: AppID
    public var name: String
    public var environment: AppEnvironment
    public var providerID: ProviderID
    public var tokenTTLSeconds: Int
    public var isEnabled: Bool
    /// The `credentials.type` values this app accepts; the first one answers
    /// requests that carry no `credentials` object.
    public var credentialTypes: [String]
    /// Options per credential type, as the operator wrote them.
    public var plugins: [String: JSONValue]
    /// This app's limits where they differ from the deployment's, by policy name.
    public var rateLimits: [String: RateLimitOverride]
    /// Who set those overrides, and when a policy's period last changed.
    public var rateLimitChanges: RateLimitChanges
    /// The tokens this app issues, each with its settings; the first answers
    /// requests that name no `token_profile`.
    public var tokenProfiles: [TokenProfileEntry]
    /// Sessions and their refresh tokens; `nil`, off.
    public var sessions: SessionSettings?
    /// The second factor a sign-in must pass; `nil`, off.
    public var mfa: SecondFactorSettings?
    /// What the app's users may do for themselves (sign up, recover, delete); `nil`, nothing.
    public var selfService: SelfServiceSettings?

    public init(
        appID: AppID,
        name: String,
        environment: AppEnvironment,
        providerID: ProviderID,
        tokenTTLSeconds: Int = AppSettings.defaultTokenTTLSeconds,
        isEnabled: Bool = true,
        credentialTypes: [String],
        plugins: [String: JSONValue] = [:],
        rateLimits: [String: RateLimitOverride] = [:],
        rateLimitChanges: RateLimitChanges = RateLimitChanges(),
        tokenProfiles: [TokenProfileEntry] = [.layer],
        sessions: SessionSettings? = nil,
        mfa: SecondFactorSettings? = nil,
        selfService: SelfServiceSettings? = nil
    ) {
        self.appID = appID
        self.name = name
        self.environment = environment
        self.providerID = providerID
        self.tokenTTLSeconds = tokenTTLSeconds
        self.isEnabled = isEnabled
        self.credentialTypes = credentialTypes
        self.plugins = plugins
        self.rateLimits = rateLimits
        self.rateLimitChanges = rateLimitChanges
        self.tokenProfiles = tokenProfiles
        self.sessions = sessions
        self.mfa = mfa
        self.selfService = selfService
    }
}
