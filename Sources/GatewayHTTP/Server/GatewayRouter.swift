public import GatewayCore
public import GatewayPluginKit
public import GatewayRuntime
public import Hummingbird
public import Logging

/// What the gateway's routes need, built once at start.
public struct GatewayDependencies: Sendable {
    public let stores: GatewayStores
    public let tenants: TenantCache
    public let plugins: PluginRegistry
    /// What the plugins' verifiers and routes are given.
    public let pluginServices: PluginServices
    public let masterKey: MasterKey
    /// The deployment's limits, the plugins' policies among them.
    public let rateLimits: RateLimitSettings
    /// How long a token request waits for the database before answering 503.
    public let databaseTimeout: Duration
    /// What `/readyz` reports besides storage.
    public let readiness: Readiness
    /// Whether every request gets an access-log line.
    public let logsRequests: Bool
    /// Renders `/metrics` (Prometheus text); empty where no metrics backend
    /// runs, `nil` when metrics are served on a port of their own.
    public let metricsExposition: (@Sendable () async -> [UInt8])?
    /// Pages over the admin API (the console), when served.
    public let frontEnds: [any AdminAPIFrontEnd]
    /// The gateway serves TLS itself: every answer carries `Strict-Transport-Security`.
    public let servesTLS: Bool
    /// The server span of every request, when traces are exported; `nil` makes no span at all.
    public let serverSpans: ServerSpanMiddleware?
    /// The threads tokens are signed on: the application's own, or the one instance tests share.
    public let signers: SigningThreads
    public let logger: Logger

    public init(
        stores: GatewayStores, tenants: TenantCache, plugins: PluginRegistry, pluginServices: PluginServices,
        masterKey: MasterKey, rateLimits: RateLimitSettings,
        databaseTimeout: Duration = .seconds(2), readiness: Readiness = Readiness(), logsRequests: Bool = true,
        metricsExposition: (@Sendable () async -> [UInt8])? = { [] }, frontEnds: [any AdminAPIFrontEnd] = [],
        servesTLS: Bool = false, serverSpans: ServerSpanMiddleware? = nil, signers: SigningThreads = .sharedByTests,
        logger: Logger
    ) {
        self.signers = signers
        self.servesTLS = servesTLS
        self.serverSpans = serverSpans
        self.stores = stores
        self.tenants = tenants
        self.plugins = plugins
        self.pluginServices = pluginServices
        self.masterKey = masterKey
        self.rateLimits = rateLimits.adding(plugins.rateLimitPolicies)
        self.databaseTimeout = databaseTimeout
        self.readiness = readiness
        self.logsRequests = logsRequests
        self.metricsExposition = metricsExposition
        self.frontEnds = frontEnds
        self.logger = logger
    }
}

/// Builds the gateway's router: request ids, client addresses and JSON
/// errors on every route; the public token, key-set and validation routes;
/// the admin API behind admin-token authentication; 405 with `Allow` for a
/// known path asked with another method.
public enum GatewayRouter {
    public static func make(_ dependencies: GatewayDependencies) -> Router<GatewayRequestContext> {
        let stores = dependencies.stores
        let pluginServices = dependencies.pluginServices

        // Every GET also answers HEAD (RFC 9110 asks it of general-purpose servers).
        let router = Router(context: GatewayRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Outermost first: the server span covers the whole answer; every
        // answer below carries the request id, is counted and logged, and an
        // error is rendered before they see it.
        if let serverSpans = dependencies.serverSpans { router.add(middleware: serverSpans) }
        router.add(middleware: RequestIDMiddleware())
        if dependencies.servesTLS { router.add(middleware: StrictTransportSecurityMiddleware()) }
        router.add(middleware: ClientAddressMiddleware(trustedProxies: dependencies.rateLimits.trustedProxies))
        router.add(middleware: RequestMetricsMiddleware())
        if dependencies.logsRequests { router.add(middleware: AccessLogMiddleware()) }
        router.add(middleware: ErrorMiddleware())
        HealthController(readiness: dependencies.readiness, storage: stores.health).addRoutes(to: router)
        if let exposition = dependencies.metricsExposition {
            MetricsController(exposition: exposition).addRoutes(to: router)
        }
        let rateLimiter = RateLimiter(ledger: stores.ledger, settings: dependencies.rateLimits)
        let gate = PublicRequestGate(
            tenants: dependencies.tenants, limits: rateLimiter, ledger: stores.ledger,
            databaseRetry: dependencies.pluginServices.databaseRetry)
        let refreshTokens = RefreshTokens(store: stores.sessions, masterKey: dependencies.masterKey)
        let secondFactors = SecondFactors(store: stores.secondFactors, masterKey: dependencies.masterKey)
        IdentityTokenController(
            issuer: TokenIssuer(
                gate: gate, signers: dependencies.signers, sessions: refreshTokens, secondFactors: secondFactors)
        ).addRoutes(to: router)
        SignOutController(gate: gate, sessions: refreshTokens).addRoutes(to: router)
        let sessionHolders = LiveSessionHolders(sessions: refreshTokens)
        SecondFactorController(gate: gate, sessionHolders: sessionHolders, secondFactors: secondFactors).addRoutes(to: router)
        let routeServices = RouteServices(
            plugin: pluginServices, tenants: dependencies.tenants, limits: rateLimiter, gate: gate,
            sessionHolders: sessionHolders)
        for plugin in dependencies.plugins.all {
            plugin.addPublicRoutes(to: router, services: routeServices)
        }
        for profile in dependencies.plugins.profiles.all {
            profile.addPublicRoutes(to: router, services: routeServices)
        }
        JWKSController(tenants: dependencies.tenants, databaseTimeout: dependencies.databaseTimeout).addRoutes(to: router)
        let api = AdminAPIRoutes(dependencies, routeServices: routeServices)
        api.addRoutes(to: router)

        if !dependencies.frontEnds.isEmpty {
            // The same controllers again, in a router of their own that the front ends call in-process.
            let inner = Router(context: GatewayRequestContext.self)
            inner.add(middleware: ErrorMiddleware())
            api.addRoutes(to: inner)
            let adminAPI = AdminAPI(responder: inner.buildResponder())
            for frontEnd in dependencies.frontEnds { frontEnd.addRoutes(to: router, api: adminAPI) }
        }
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes.map { ($0.path, $0.method) }))
        return router
    }
}
