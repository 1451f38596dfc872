/// Everything the gateway keeps, behind the protocols its routes use
/// (`GatewayPostgres` builds the PostgreSQL set).
public struct GatewayStores: Sendable {
    public let apps: any AppStore
    public let keys: any KeyStore
    public let adminTokens: any AdminTokenStore
    public let auditTrail: any AuditTrail
    /// What the tenant cache reads.
    public let tenants: any TenantStore
    /// Rate-limit counters and audit rows of requests on the public routes.
    public let ledger: any RequestLedger
    /// What `/readyz` asks.
    public let health: any StorageHealth
    /// The operator console's sign-ins.
    public let consoleSessions: any ConsoleSessionStore
    /// Users' sessions (their refresh tokens), as read and ended outside the ledger.
    public let sessions: any SessionStore
    /// Users' second factors and the tickets of sign-ins waiting for one.
    public let secondFactors: any SecondFactorStore
    /// The user changes not every holder has heard yet.
    public let userChanges: any UserChangeJournal

    public init(
        apps: any AppStore, keys: any KeyStore, adminTokens: any AdminTokenStore, auditTrail: any AuditTrail,
        tenants: any TenantStore, ledger: any RequestLedger, health: any StorageHealth,
        consoleSessions: any ConsoleSessionStore, sessions: any SessionStore,
        secondFactors: any SecondFactorStore, userChanges: any UserChangeJournal
    ) {
        self.apps = apps
        self.keys = keys
        self.adminTokens = adminTokens
        self.auditTrail = auditTrail
        self.tenants = tenants
        self.ledger = ledger
        self.health = health
        self.consoleSessions = consoleSessions
        self.sessions = sessions
        self.secondFactors = secondFactors
        self.userChanges = userChanges
    }
}
