public import GatewayCore

/// What a plugin's public routes (`POST /v1/phone_codes`, say) may use
/// besides the database: the tenant cache, the rate limiter and the
/// request ledger (for audit events) the token endpoint uses, so they behave like it.
public struct PublicRouteServices: Sendable {
    public let plugin: PluginServices
    public let tenants: TenantCache
    public let rateLimiter: RateLimiter
    public let ledger: any RequestLedger

    public init(plugin: PluginServices, tenants: TenantCache, rateLimiter: RateLimiter, ledger: any RequestLedger) {
        self.plugin = plugin
        self.tenants = tenants
        self.rateLimiter = rateLimiter
        self.ledger = ledger
    }
}
