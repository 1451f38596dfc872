import GatewayCore
public import GatewayPluginKit
import GatewayRuntime
public import Hummingbird
import Logging

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
        if let serverSpans = dependencies.options.serverSpans { router.add(middleware: serverSpans) }
        router.add(middleware: RequestIDMiddleware())
        if dependencies.options.servesTLS { router.add(middleware: StrictTransportSecurityMiddleware()) }
        router.add(middleware: ClientAddressMiddleware(trustedProxies: dependencies.rateLimits.trustedProxies))
        router.add(middleware: RequestMetricsMiddleware())
        if dependencies.options.logsRequests { router.add(middleware: AccessLogMiddleware()) }
        router.add(middleware: ErrorMiddleware())
        HealthController(readiness: dependencies.options.readiness, storage: stores.health).addRoutes(to: router)
        if let exposition = dependencies.options.metricsExposition {
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
                gate: gate, signers: dependencies.options.signers, sessions: refreshTokens, secondFactors: secondFactors)
        ).addRoutes(to: router)
        SignOutController(gate: gate, sessions: refreshTokens).addRoutes(to: router)
        let sessionHolders = LiveSessionHolders(sessions: refreshTokens, secondFactors: stores.secondFactors)
        SecondFactorController(gate: gate, sessionHolders: sessionHolders, secondFactors: secondFactors).addRoutes(to: router)
        let routeServices = RouteServices(
            plugin: pluginServices, tenants: dependencies.tenants, limits: rateLimiter, gate: gate,
            sessionHolders: sessionHolders,
            userLifecycle: dependencies.userLifecycle,
            secondFactors: secondFactors)
        AccountDeletionController(
            gate: gate, sessionHolders: sessionHolders, userLifecycle: routeServices.userLifecycle,
            passwords: dependencies.plugins.all.lazy.compactMap { $0 as? any PasswordDirectoryProvider }.first,
            pluginServices: pluginServices
        ).addRoutes(to: router)
        for plugin in dependencies.plugins.all {
            plugin.addPublicRoutes(to: router, services: routeServices)
        }
        for profile in dependencies.plugins.profiles.all {
            profile.addPublicRoutes(to: router, services: routeServices)
        }
        JWKSController(tenants: dependencies.tenants, databaseTimeout: dependencies.databaseTimeout).addRoutes(to: router)
        let api = AdminAPIRoutes(dependencies, routeServices: routeServices)
        api.addRoutes(to: router)

        if !dependencies.options.frontEnds.isEmpty {
            // The same controllers again, in a router of their own that the front ends call in-process.
            let inner = Router(context: GatewayRequestContext.self)
            inner.add(middleware: ErrorMiddleware())
            api.addRoutes(to: inner)
            let adminAPI = AdminAPI(responder: inner.buildResponder())
            for frontEnd in dependencies.options.frontEnds { frontEnd.addRoutes(to: router, api: adminAPI) }
        }
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes.map { ($0.path, $0.method) }))
        return router
    }
}
