/// The deployment's rate limiting: on or off, the default policies, and
/// which peers may tell us the client's address.
public struct RateLimitSettings: Sendable {
    public var isEnabled: Bool
    /// The deployment defaults by policy name; apps override per policy.
    public var policies: [String: RateLimitPolicy]
    /// Peers whose `X-Forwarded-For` is believed.
    public var trustedProxies: [CIDR]
    /// How many leading bits of an IPv6 client address its limits count by:
    /// one subscriber usually holds a whole /64, so a full /128 would give it
    /// 2^64 fresh budgets.
    public var ipv6PrefixLength: Int
    /// Policies counting every request whose limit is at least this are
    /// spent by each replica from blocks it leases (`CounterLeases`, in
    /// GatewayRuntime); 0 leases none.
    public var leaseMinimumLimit: Int

    public static let ipv6PrefixRange = 32...128
    public static let leaseMinimumLimitRange = 0...1_000_000

    /// - Parameter policies: the gateway's own by default; the plugins'
    ///   join them where the router is built (``adding(_:)``).
    public init(
        isEnabled: Bool = true, policies: [RateLimitPolicy] = RateLimitPolicy.gatewayPolicies,
        trustedProxies: [CIDR] = [], ipv6PrefixLength: Int = 64, leaseMinimumLimit: Int = 1_000
    ) {
        self.isEnabled = isEnabled
        self.policies = Dictionary(policies.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.trustedProxies = trustedProxies
        self.ipv6PrefixLength = ipv6PrefixLength
        self.leaseMinimumLimit = leaseMinimumLimit
    }

    /// Whether `policy`'s counters are spent from leased blocks.
    public func leases(_ policy: RateLimitPolicy) -> Bool {
        leaseMinimumLimit > 0 && policy.counting == .everyRequest && policy.limit >= leaseMinimumLimit
    }

    /// These settings with `defaults` added where no policy of that name is
    /// set already (an operator's setting wins over a plugin's default).
    public func adding(_ defaults: [RateLimitPolicy]) -> RateLimitSettings {
        var settings = self
        for policy in defaults where settings.policies[policy.name] == nil { settings.policies[policy.name] = policy }
        return settings
    }

    /// What a client address is counted as: an IPv4 address itself, an IPv6
    /// address by its ``ipv6PrefixLength`` range (`2001:db8:1:2::/64`).
    public func subject(forClient address: String) -> String {
        // Most clients: an IPv4 address as the socket (or a proxy's header, resolved) writes it. Checked
        // without being parsed, which cost a token a few allocations.
        if IPAddress.isDottedQuad(address) { return address }
        guard let parsed = IPAddress(address), parsed.bytes.count == 16, ipv6PrefixLength < 128 else { return address }
        return CIDR(covering: parsed, prefixLength: ipv6PrefixLength).description
    }

    /// The policy `name` as it applies to `app`.
    public func policy(_ name: String, for app: AppSettings) -> RateLimitPolicy? {
        guard var policy = policies[name] else { return nil }
        if let override = app.rateLimits[name] {
            policy.limit = override.limit
            policy.periodSeconds = override.periodSeconds
        }
        policy.periodChangedAt = app.rateLimitChanges.periodChangedAt[name]
        return policy
    }
}
