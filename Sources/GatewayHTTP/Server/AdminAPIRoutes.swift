import GatewayCore
import GatewayPluginKit
import GatewayRuntime
import Hummingbird

/// The admin API under `/admin/v1` behind admin-token authentication, and
/// token validation: built once, added to the public router and, for the
/// console, to an in-process one, so both share each controller's state.
struct AdminAPIRoutes {
    let dependencies: GatewayDependencies
    let routeServices: RouteServices
    let validation: TokenValidationController
    let apps: AppAdminController
    let keys: KeyAdminController
    let adminTokens: AdminTokenController
    let audit: AuditEventController
    let sessions: SessionAdminController
    let secondFactors: SecondFactorAdminController
    /// Refused admin tokens per client address, for both routers (the console signs in through the inner one).
    let authFailures: ClientThrottle

    init(_ dependencies: GatewayDependencies, routeServices: RouteServices) {
        let stores = dependencies.stores
        self.dependencies = dependencies
        self.routeServices = routeServices
        validation = TokenValidationController(
            keys: stores.keys, tenants: dependencies.tenants, databaseTimeout: dependencies.databaseTimeout,
            throttle: ClientThrottle(policy: .validations, settings: dependencies.rateLimits))
        authFailures = ClientThrottle(policy: .adminAuthFailures, settings: dependencies.rateLimits)
        apps = AppAdminController(
            apps: stores.apps,
            settingsInput: AppSettingsInput(
                plugins: dependencies.plugins, pluginServices: dependencies.pluginServices,
                rateLimits: dependencies.rateLimits, masterKey: dependencies.masterKey),
            sessions: stores.sessions)
        keys = KeyAdminController(
            apps: stores.apps, keys: stores.keys, masterKey: dependencies.masterKey, generator: KeyGenerator(),
            work: routeServices.adminWork)
        adminTokens = AdminTokenController(tokens: stores.adminTokens, apps: stores.apps)
        audit = AuditEventController(events: stores.auditTrail)
        sessions = SessionAdminController(
            apps: stores.apps, sessions: stores.sessions, userLifecycle: routeServices.userLifecycle)
        secondFactors = SecondFactorAdminController(
            apps: stores.apps,
            secondFactors: SecondFactors(store: stores.secondFactors, masterKey: dependencies.masterKey))
    }

    func addRoutes(to router: Router<GatewayRequestContext>) {
        validation.addRoutes(to: router)
        let admin = router.group("/admin/v1").add(
            middleware: AdminAuthMiddleware(
                tokens: dependencies.stores.adminTokens, databaseTimeout: dependencies.databaseTimeout,
                failures: authFailures))
        apps.addRoutes(to: admin)
        keys.addRoutes(to: admin)
        adminTokens.addRoutes(to: admin)
        audit.addRoutes(to: admin)
        sessions.addRoutes(to: admin)
        secondFactors.addRoutes(to: admin)
        for plugin in dependencies.plugins.all {
            plugin.addAdminRoutes(to: admin, services: routeServices)
        }
    }
}
