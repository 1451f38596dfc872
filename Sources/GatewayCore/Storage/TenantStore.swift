/// What the tenant cache reads to build a tenant: the app and its keys.
public protocol TenantStore: Sendable {
    /// The app as stored, or `nil` when no app has that id.
    func app(_ appID: AppID) async throws -> StoredApp?
    /// Every key the app holds, in any state, its private halves sealed.
    func keys(of appID: AppID) async throws -> [StoredKey]
}
