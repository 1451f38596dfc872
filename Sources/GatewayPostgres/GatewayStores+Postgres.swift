public import GatewayCore
public import Logging
public import PostgresNIO

extension GatewayStores {
    /// The stores in the PostgreSQL `client` reaches; public routes write
    /// through `ledger`, which the caller runs as a service.
    public static func postgres(
        client: PostgresClient, ledger: PostgresRequestLedger, logger: Logger,
        databaseRetry: DatabaseRetry = .once(within: .seconds(2))
    ) -> GatewayStores {
        GatewayStores(
            apps: AppRepository(client: client, logger: logger), keys: AppKeyRepository(client: client, logger: logger),
            adminTokens: AdminTokenRepository(client: client, logger: logger),
            auditTrail: AuditEventRepository(client: client, logger: logger),
            tenants: PostgresTenantStore(client: client, logger: logger), ledger: ledger,
            health: PostgresStorageHealth(client: client, ledger: ledger, logger: logger),
            consoleSessions: ConsoleSessionRepository(client: client, logger: logger),
            sessions: PostgresSessions(client: client, logger: logger, retry: databaseRetry),
            secondFactors: PostgresSecondFactors(client: client, logger: logger),
            userChanges: PostgresUserChanges(client: client, logger: logger))
    }
}
