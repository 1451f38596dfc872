public import GatewayPostgres
public import Hummingbird

/// Builds the gateway's router: request ids and JSON errors on every route,
/// then the token endpoint.
public enum GatewayRouter {
    public static func make(tenants: TenantDirectory, auditLog: PostgresAuditLog) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        IdentityTokenController(tenants: tenants, auditLog: auditLog).addRoutes(to: router)
        return router
    }
}
