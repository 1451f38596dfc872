public import GatewayCore
import GatewayPostgres
public import Hummingbird
public import Logging
public import PostgresNIO

/// Builds the gateway's router: request ids and JSON errors on every route;
/// the public token, key-set and validation routes; the admin API behind
/// admin-token authentication.
public enum GatewayRouter {
    public static func make(
        client: PostgresClient, tenants: TenantDirectory, plugins: PluginRegistry, masterKey: MasterKey, logger: Logger
    ) -> Router<GatewayRequestContext> {
        let apps = AppRepository(client: client, logger: logger)
        let keys = AppKeyRepository(client: client, logger: logger)
        let adminTokens = AdminTokenRepository(client: client, logger: logger)
        let transactions = AuditedTransaction(client: client, logger: logger)

        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        IdentityTokenController(tenants: tenants, auditLog: PostgresAuditLog(client: client, logger: logger))
            .addRoutes(to: router)
        TokenValidationController(keys: keys).addRoutes(to: router)
        JWKSController(apps: apps, keys: keys).addRoutes(to: router)

        let admin = router.group("/admin/v1").add(middleware: AdminAuthMiddleware(tokens: adminTokens))
        AppAdminController(apps: apps, plugins: plugins, transactions: transactions).addRoutes(to: admin)
        KeyAdminController(apps: apps, keys: keys, masterKey: masterKey, transactions: transactions).addRoutes(to: admin)
        AdminTokenController(tokens: adminTokens, apps: apps, transactions: transactions).addRoutes(to: admin)
        return router
    }
}
