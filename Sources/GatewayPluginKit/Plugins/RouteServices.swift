/// What a plugin's routes may use besides the database: the gate every
/// public request against an app passes (``PublicRequestGate``), so public
/// routes (`POST /v1/phone_codes`, say) behave like the token endpoint, and
/// the tenant cache, so admin routes see an app as the token endpoint does
/// (its opened secrets, through the plugin's own verifier), and who holds
/// a live session, for routes only the user themself may call, and the
/// one way a route that changes a user tells everything that holds
/// something of theirs (``UserLifecycle``).
public struct RouteServices: Sendable {
    public let plugin: PluginServices
    public let tenants: any TenantLookup
    public let gate: PublicRequestGate
    public let sessionHolders: any SessionHolders
    /// Where a user's change goes: their factor, tickets, plugins' credentials and sessions.
    public let userLifecycle: UserLifecycle
    /// The users' second factors, for a route that must ask one itself.
    public let secondFactors: any SecondFactorProofs
    private let limits: any RequestLimits

    public init(
        plugin: PluginServices, tenants: any TenantLookup, limits: any RequestLimits, gate: PublicRequestGate,
        sessionHolders: any SessionHolders, userLifecycle: UserLifecycle, secondFactors: any SecondFactorProofs
    ) {
        self.secondFactors = secondFactors
        self.plugin = plugin
        self.tenants = tenants
        self.limits = limits
        self.gate = gate
        self.sessionHolders = sessionHolders
        self.userLifecycle = userLifecycle
    }

    /// The limit on an admin route's costly work (``AdminWorkLimit``).
    public var adminWork: AdminWorkLimit { AdminWorkLimit(limits: limits, apps: plugin.apps) }
}
