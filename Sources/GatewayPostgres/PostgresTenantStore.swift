public import GatewayCore
public import Logging
public import PostgresNIO

/// ``TenantStore`` over the `apps` and `app_keys` tables.
public struct PostgresTenantStore: TenantStore {
    private let apps: AppRepository
    private let keys: AppKeyRepository

    public init(client: PostgresClient, logger: Logger) {
        self.apps = AppRepository(client: client, logger: logger)
        self.keys = AppKeyRepository(client: client, logger: logger)
    }

    public func app(_ appID: AppID) async throws -> StoredApp? {
        try await apps.find(appID)
    }

    public func keys(of appID: AppID) async throws -> [StoredKey] {
        try await keys.keys(of: appID)
    }

    public func versions() async throws -> [AppID: AppVersion]? {
        try await apps.versions()
    }
}
