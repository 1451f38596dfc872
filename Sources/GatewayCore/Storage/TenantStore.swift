/// What the tenant cache reads to build a tenant: the app and its keys.
public protocol TenantStore: Sendable {
    /// The app as stored, or `nil` when no app has that id.
    func app(_ appID: AppID) async throws -> StoredApp?
    /// Every key the app holds, in any state, its private halves sealed.
    func keys(of appID: AppID) async throws -> [StoredKey]
    /// Every app's ``AppVersion``, in one read; `nil` from a store that cannot
    /// tell, whose cache then drops every app at each periodic check.
    func versions() async throws -> [AppID: AppVersion]?
}

extension TenantStore {
    public func versions() async throws -> [AppID: AppVersion]? { nil }
}
