public import GatewayPostgres

/// What a plugin's public routes (`POST /v1/phone_codes`, say) may use
/// besides the database: the tenant cache, the rate limiter and the
/// group-commit writer (for audit events) the token endpoint uses, so they behave like it.
public struct PublicRouteServices: Sendable {
    public let plugin: PluginServices
    public let tenants: TenantDirectory
    public let rateLimiter: RateLimiter
    public let writer: GroupCommitWriter

    public init(plugin: PluginServices, tenants: TenantDirectory, rateLimiter: RateLimiter, writer: GroupCommitWriter) {
        self.plugin = plugin
        self.tenants = tenants
        self.rateLimiter = rateLimiter
        self.writer = writer
    }
}
