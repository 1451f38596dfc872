public import GatewayCore

/// What a plugin's routes may use besides the database: the tenant cache,
/// the rate limiter and the request ledger (for audit events) the token
/// endpoint uses, so public routes (`POST /v1/phone_codes`, say) behave like
/// it, and admin routes see an app as the token endpoint does (its opened
/// secrets, through the plugin's own verifier).
public struct RouteServices: Sendable {
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

    /// The limit on an admin route's costly work (``AdminWorkLimit``).
    public var adminWork: AdminWorkLimit { AdminWorkLimit(rateLimiter: rateLimiter, apps: plugin.apps) }
}
