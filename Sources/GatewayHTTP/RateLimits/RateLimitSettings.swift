public import GatewayCore

/// The deployment's rate limiting: on or off, the default policies, and
/// which peers may tell us the client's address.
public struct RateLimitSettings: Sendable {
    public var isEnabled: Bool
    /// The deployment defaults by policy name; apps override per policy.
    public var policies: [String: RateLimitPolicy]
    /// Peers whose `X-Forwarded-For` is believed.
    public var trustedProxies: [CIDR]

    public init(
        isEnabled: Bool = true, policies: [String: RateLimitPolicy] = RateLimitPolicy.defaults,
        trustedProxies: [CIDR] = []
    ) {
        self.isEnabled = isEnabled
        self.policies = policies
        self.trustedProxies = trustedProxies
    }

    /// The policy `name` as it applies to `app`.
    public func policy(_ name: String, for app: AppSettings) -> RateLimitPolicy? {
        guard var policy = policies[name] else { return nil }
        if let override = app.rateLimits[name] {
            policy.limit = override.limit
            policy.periodSeconds = override.periodSeconds
        }
        return policy
    }
}
