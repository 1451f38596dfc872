public import GatewayCore
import GatewayPostgres
public import Logging
public import PostgresNIO
import Synchronization

/// Finds the tenant for an app id. Each app is read from Postgres once, its
/// key opened and parsed once, its verifiers built once; later requests are
/// served from memory until ``invalidate(_:)``.
public final class TenantDirectory: Sendable {
    private let apps: AppRepository
    private let keys: AppKeyRepository
    private let plugins: PluginRegistry
    private let masterKey: MasterKey
    private let logger: Logger
    private let cache = Mutex<[AppID: Tenant]>([:])

    public init(client: PostgresClient, plugins: PluginRegistry, masterKey: MasterKey, logger: Logger) {
        self.apps = AppRepository(client: client, logger: logger)
        self.keys = AppKeyRepository(client: client, logger: logger)
        self.plugins = plugins
        self.masterKey = masterKey
        self.logger = logger
    }

    /// The tenant, or 404 `unknown_app`. Database failures surface as 503.
    public func tenant(for appID: AppID) async throws(GatewayError) -> Tenant {
        if let cached = cache.withLock({ $0[appID] }) { return cached }
        let tenant: Tenant
        do {
            guard let loaded = try await load(appID) else {
                throw GatewayError(.unknownApp, status: 404, "No app with id \(appID) exists on this gateway.")
            }
            tenant = loaded
        } catch let error as GatewayError {
            throw error
        } catch {
            logger.error("loading an app failed", metadata: ["app_id": "\(appID)", "error": "\(error)"])
            throw .unavailable
        }
        cache.withLock { $0[appID] = tenant }
        return tenant
    }

    /// Forgets one app; the next request reads it again.
    public func invalidate(_ appID: AppID) {
        _ = cache.withLock { $0.removeValue(forKey: appID) }
    }

    /// Forgets every app.
    public func invalidateAll() {
        cache.withLock { $0.removeAll() }
    }

    /// Applies a payload of ``AppChangeNotification``: one app id, or everything.
    public func invalidate(notification payload: String) {
        if let appID = AppID(payload) { invalidate(appID) } else { invalidateAll() }
    }

    private func load(_ appID: AppID) async throws -> Tenant? {
        guard let settings = try await apps.find(appID)?.settings else { return nil }
        var signingKey: TokenSigningKey?
        if let stored = try await keys.activeKey(of: appID) {
            let pair = try stored.open(with: masterKey)
            signingKey = TokenSigningKey(keyID: stored.keyID, signer: pair.signer)
        }
        let verifiers = plugins.verifiers(for: settings)
        for case let (type, .failure(error)) in verifiers {
            logger.warning(
                "an app's credential type is unusable",
                metadata: ["app_id": "\(appID)", "credential_type": "\(type)", "reason": "\(error.message)"])
        }
        return Tenant(settings: settings, signingKey: signingKey, verifiers: verifiers)
    }
}
