public import GatewayCore

/// How a route finds an app's tenant (its settings, opened keys and built
/// verifiers) as the token endpoint does. The gateway's `TenantCache` (in
/// `GatewayRuntime`) is the implementation.
public protocol TenantLookup: Sendable {
    /// The tenant when it is in memory: no waiting, no database.
    func cachedTenant(for appID: AppID) -> Tenant?

    /// The tenant from memory, or loaded within `timeout`. 404
    /// `unknown_app`; 503 `unavailable` when the database fails or takes longer.
    func tenant(for appID: AppID, within timeout: Duration) async throws(GatewayError) -> Tenant
}
