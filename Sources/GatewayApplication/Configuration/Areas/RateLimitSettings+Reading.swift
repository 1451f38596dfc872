import Foundation
import GatewayCore
import GatewayPluginKit

extension RateLimitSettings {
    /// `rate_limits.*` over `policies` (the gateway's and the plugins'), and
    /// the proxies whose `X-Forwarded-For` names the client (`http.trusted_proxies`).
    init(_ settings: SettingsReader, policies: [RateLimitPolicy]) {
        self.init(policies: policies)
        isEnabled = settings.boolean("rate_limits.enabled", default: true)
        for name in self.policies.keys.sorted() {
            let key = "rate_limits.\(name)"
            self.policies[name]!.limit = settings.integer(
                key + ".limit", in: RateLimitPolicy.limitRange, default: self.policies[name]!.limit)
            self.policies[name]!.periodSeconds = settings.integer(
                key + ".period_seconds", in: RateLimitPolicy.periodRange, default: self.policies[name]!.periodSeconds)
        }
        ipv6PrefixLength = settings.integer(
            "rate_limits.ipv6_prefix_length", in: RateLimitSettings.ipv6PrefixRange, default: ipv6PrefixLength)
        leaseMinimumLimit = settings.integer(
            "rate_limits.lease_minimum_limit", in: RateLimitSettings.leaseMinimumLimitRange, default: leaseMinimumLimit)
        if let list = settings.string("http.trusted_proxies") {
            for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
                if let range = CIDR(entry) { trustedProxies.append(range) } else {
                    settings.note("http.trusted_proxies", "'\(entry)' is not an address or CIDR range")
                }
            }
        }
    }
}
