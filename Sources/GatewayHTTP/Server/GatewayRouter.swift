public import GatewayCore
import GatewayPostgres
public import Hummingbird
public import Logging
public import PostgresNIO

/// What the gateway's routes need, built once at start.
public struct GatewayDependencies: Sendable {
    public let client: PostgresClient
    public let tenants: TenantDirectory
    public let plugins: PluginRegistry
    public let masterKey: MasterKey
    public let rateLimits: RateLimitSettings
    /// Rate-limit counters and audit rows of requests on the public routes.
    public let ledger: any RequestLedger
    /// What `/readyz` asks of storage.
    public let storageHealth: any StorageHealth
    /// How long a token request waits for the database before answering 503.
    public let databaseTimeout: Duration
    /// What `/readyz` reports besides the database.
    public let readiness: Readiness
    /// Whether every request gets an access-log line.
    public let logsRequests: Bool
    /// Renders `/metrics` (Prometheus text); empty where no metrics backend
    /// runs, `nil` when metrics are served on a port of their own.
    public let metricsExposition: (@Sendable () async -> [UInt8])?
    public let logger: Logger

    public init(
        client: PostgresClient, tenants: TenantDirectory, plugins: PluginRegistry, masterKey: MasterKey,
        rateLimits: RateLimitSettings, ledger: any RequestLedger, storageHealth: any StorageHealth,
        databaseTimeout: Duration = .seconds(2), readiness: Readiness = Readiness(), logsRequests: Bool = true,
        metricsExposition: (@Sendable () async -> [UInt8])? = { [] }, logger: Logger
    ) {
        self.client = client
        self.tenants = tenants
        self.plugins = plugins
        self.masterKey = masterKey
        self.rateLimits = rateLimits
        self.ledger = ledger
        self.storageHealth = storageHealth
        self.databaseTimeout = databaseTimeout
        self.readiness = readiness
        self.logsRequests = logsRequests
        self.metricsExposition = metricsExposition
        self.logger = logger
    }
}

/// Builds the gateway's router: request ids, client addresses and JSON
/// errors on every route; the public token, key-set and validation routes;
/// the admin API behind admin-token authentication; 405 with `Allow` for a
/// known path asked with another method.
public enum GatewayRouter {
    public static func make(_ dependencies: GatewayDependencies) -> Router<GatewayRequestContext> {
        let client = dependencies.client
        let logger = dependencies.logger
        let apps = AppRepository(client: client, logger: logger)
        let keys = AppKeyRepository(client: client, logger: logger)
        let adminTokens = AdminTokenRepository(client: client, logger: logger)
        let transactions = AuditedTransaction(client: client, logger: logger)
        let pluginServices = PluginServices(client: client, logger: logger, databaseTimeout: dependencies.databaseTimeout)

        // Every GET also answers HEAD (RFC 9110 asks it of general-purpose servers).
        let router = Router(context: GatewayRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestIDMiddleware(
            trustedProxies: dependencies.rateLimits.trustedProxies, logsRequests: dependencies.logsRequests))
        HealthController(readiness: dependencies.readiness, storage: dependencies.storageHealth).addRoutes(to: router)
        if let exposition = dependencies.metricsExposition {
            MetricsController(exposition: exposition).addRoutes(to: router)
        }
        let rateLimiter = RateLimiter(ledger: dependencies.ledger, settings: dependencies.rateLimits)
        IdentityTokenController(
            tenants: dependencies.tenants, ledger: dependencies.ledger, rateLimiter: rateLimiter,
            databaseTimeout: dependencies.databaseTimeout
        ).addRoutes(to: router)
        let publicServices = PublicRouteServices(
            plugin: pluginServices, tenants: dependencies.tenants, rateLimiter: rateLimiter,
            ledger: dependencies.ledger)
        for plugin in dependencies.plugins.all {
            plugin.addPublicRoutes(to: router, services: publicServices)
        }
        TokenValidationController(keys: keys, databaseTimeout: dependencies.databaseTimeout).addRoutes(to: router)
        JWKSController(tenants: dependencies.tenants, databaseTimeout: dependencies.databaseTimeout).addRoutes(to: router)

        let admin = router.group("/admin/v1").add(middleware: AdminAuthMiddleware(tokens: adminTokens, databaseTimeout: dependencies.databaseTimeout))
        AppAdminController(
            apps: apps,
            settingsInput: AppSettingsInput(
                plugins: dependencies.plugins, pluginServices: pluginServices, rateLimits: dependencies.rateLimits,
                masterKey: dependencies.masterKey),
            transactions: transactions
        ).addRoutes(to: admin)
        KeyAdminController(
            apps: apps, keys: keys, masterKey: dependencies.masterKey, transactions: transactions, generator: KeyGenerator())
            .addRoutes(to: admin)
        AdminTokenController(tokens: adminTokens, apps: apps, transactions: transactions).addRoutes(to: admin)
        AuditEventController(events: AuditEventRepository(client: client, logger: logger)).addRoutes(to: admin)
        for plugin in dependencies.plugins.all {
            plugin.addAdminRoutes(to: admin, services: pluginServices)
        }
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes.map { ($0.path, $0.method) }))
        return router
    }
}
