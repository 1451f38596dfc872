public import GatewayCore
public import GatewayPluginKit
public import Logging
import CoreMetrics
import Tracing
import Synchronization

/// Finds the tenant for an app id. Each app is read from storage once, its
/// key opened and parsed once, its verifiers built once; later requests are
/// served from memory until ``invalidate(_:)``. An unknown app id is also
/// remembered, for ``unknownAppMemory``, so a flood of made-up ids does not
/// become a flood of queries (creating the app notifies and clears it); the
/// expired ones are swept whenever the cache has doubled since the last
/// sweep, so such a flood holds memory for seconds, not until the next reload.
public final class TenantCache: TenantLookup {
    private let store: any TenantStore
    private let makeSigner: @Sendable (RSAKeyPair) throws -> any RS256Signer
    private let plugins: PluginRegistry
    private let pluginServices: PluginServices
    private let masterKey: MasterKey
    private let logger: Logger
    enum Entry {
        case known(Tenant)
        case unknown(until: ContinuousClock.Instant)
        /// A load under way: concurrent requests for the app share it.
        case loading(Task<Tenant?, any Error>)
    }

    /// How long an id that names no app is answered from memory.
    public static let unknownAppMemory: Duration = .seconds(5)
    /// The entries and their sweep; on its own so it can be tested without a database.
    struct Cache {
        private(set) var entries: [AppID: Entry] = [:]
        /// Apps held loaded (``Entry/known(_:)``), for `gateway_tenant_cache_apps`.
        private(set) var knownCount = 0
        /// Sweep expired unknown ids once this many entries are held.
        var sweepAt = 1024

        subscript(_ appID: AppID) -> Entry? {
            get { entries[appID] }
            set {
                if case .known = entries[appID] { knownCount -= 1 }
                if case .known = newValue { knownCount += 1 }
                entries[appID] = newValue
            }
        }

        mutating func removeAll() {
            entries.removeAll()
            knownCount = 0
        }

        mutating func rememberUnknown(_ appID: AppID, now: ContinuousClock.Instant) {
            self[appID] = .unknown(until: now + TenantCache.unknownAppMemory)
            guard entries.count >= sweepAt else { return }
            entries = entries.filter { _, entry in
                if case .unknown(let until) = entry { return now < until }
                return true
            }
            sweepAt = max(1024, entries.count * 2)
        }
    }
    private let cache = Mutex(Cache())
    /// `gateway_tenant_cache_apps`: the apps this replica holds loaded (each with its key's signer and verifiers).
    private let heldApps = Gauge(label: "gateway_tenant_cache_apps")

    /// - Parameters:
    ///   - makeSigner: the signer for an app's active key, built once per load
    ///     (the executable passes OpenSSL's).
    ///   - pluginServices: what the app's verifiers are built with.
    public init(
        store: any TenantStore, makeSigner: @escaping @Sendable (RSAKeyPair) throws -> any RS256Signer,
        plugins: PluginRegistry, pluginServices: PluginServices, masterKey: MasterKey, logger: Logger
    ) {
        self.store = store
        self.makeSigner = makeSigner
        self.plugins = plugins
        self.pluginServices = pluginServices
        self.masterKey = masterKey
        self.logger = logger
    }

    /// The tenant when it is in memory: no waiting, no database.
    public func cachedTenant(for appID: AppID) -> Tenant? {
        guard case .known(let tenant) = cache.withLock({ $0[appID] }) else { return nil }
        return tenant
    }

    /// The tenant from memory, or loaded within `timeout`: the way request
    /// handlers find an app. 404 `unknown_app`; 503 `unavailable` when the
    /// database fails or takes longer.
    public func tenant(for appID: AppID, within timeout: Duration) async throws(GatewayError) -> Tenant {
        if let cached = cachedTenant(for: appID) {
            if Spans.areRecorded {
                let now = DefaultTracerClock.now
                Spans.record("tenant lookup", from: now, to: now, attributes: Self.lookup("hit", appID))
            }
            return cached
        }
        do {
            return try await Spans.run("tenant lookup", attributes: Self.lookup("load", appID)) { _ in
                try await withTimeout(timeout) { try await self.tenant(for: appID) }
            }
        } catch let error as GatewayError {
            throw error
        } catch is TimeoutError {
            // The load goes on for the next request; this one answers 503, and says why here.
            logger.warning("loading an app took longer than its timeout", metadata: ["app_id": "\(appID)", "timeout": "\(timeout)"])
            throw .unavailable
        } catch {
            logger.error("loading an app failed", metadata: ["app_id": "\(appID)", "error": "\(error)"])
            throw .unavailable
        }
    }

    private static func lookup(_ cache: String, _ appID: AppID) -> SpanAttributes {
        ["gateway.tenant.cache": .string(cache), "gateway.app_id": .string(appID.description)]
    }

    /// The tenant, or 404 `unknown_app`. Database failures surface as 503.
    public func tenant(for appID: AppID) async throws(GatewayError) -> Tenant {
        let unknownApp = GatewayError(.unknownApp, .notFound, "No app with id \(appID) exists on this gateway.")
        // The load to wait for is taken in the same lock that finds or starts it.
        let lookup = cache.withLock { cache -> Result<Entry, GatewayError> in
            switch cache[appID] {
            case .known(let tenant):
                return .success(.known(tenant))
            case .unknown(let until) where ContinuousClock.now < until:
                return .failure(unknownApp)
            case .loading(let task):
                return .success(.loading(task))
            case .unknown, nil:
                let task = Task { try await self.load(appID) }
                cache[appID] = .loading(task)
                return .success(.loading(task))
            }
        }
        guard case .loading(let task) = try lookup.get() else {
            if case .known(let tenant) = try lookup.get() { return tenant }
            throw unknownApp
        }
        let loaded: Tenant?
        do {
            loaded = try await task.value
        } catch {
            cache.withLock { if case .loading(task) = $0[appID] { $0[appID] = nil } }
            logger.error("loading an app failed", metadata: ["app_id": "\(appID)", "error": "\(error)"])
            throw .unavailable
        }
        let held = cache.withLock { cache -> Int in
            // Only this load's own entry: a load that began before an
            // invalidation must not overwrite the one that began after it.
            guard case .loading(task) = cache[appID] else { return cache.knownCount }
            if let loaded {
                cache[appID] = .known(loaded)
            } else {
                cache.rememberUnknown(appID, now: .now)
            }
            return cache.knownCount
        }
        heldApps.record(held)
        guard let loaded else { throw unknownApp }
        return loaded
    }

    /// Puts a tenant in memory as if it had been loaded (cache warm-up, benchmarks).
    public func remember(_ tenant: Tenant) {
        heldApps.record(cache.withLock { cache in
            cache[tenant.settings.appID] = .known(tenant)
            return cache.knownCount
        })
    }

    /// Forgets one app; the next request reads it again.
    public func invalidate(_ appID: AppID) {
        heldApps.record(cache.withLock { cache in
            cache[appID] = nil
            return cache.knownCount
        })
    }

    /// Forgets every app.
    public func invalidateAll() {
        cache.withLock { $0.removeAll() }
        heldApps.record(0)
    }

    /// Applies a payload of ``AppChangeNotification``: one app id, or everything.
    public func invalidate(notification payload: String) {
        if let appID = AppID(payload) { invalidate(appID) } else { invalidateAll() }
    }

    /// The periodic safety net for a missed notification: asks the store
    /// for every app's ``AppVersion`` and forgets only the apps held at
    /// another version (or gone). Dropping every app each minute, as it did
    /// until 2026-12-07, cost a replica holding 10 000 apps 10 000 loads a
    /// minute, each parsing a key whose first signature then paid its setup:
    /// tokens spread over them came at a third of the rate of one app's.
    /// A store that cannot tell drops every app; a read that fails keeps them.
    public func recheck() async {
        let versions: [AppID: AppVersion]?
        do {
            versions = try await store.versions()
        } catch {
            logger.warning("the tenant cache's periodic check failed; apps kept", metadata: ["error": "\(error)"])
            return
        }
        guard let versions else { return invalidateAll() }
        let changed = cache.withLock { cache in
            cache.entries.compactMap { appID, entry -> AppID? in
                guard case .known(let tenant) = entry, tenant.version == nil || tenant.version != versions[appID] else { return nil }
                return appID
            }
        }
        for appID in changed { invalidate(appID) }
        if !changed.isEmpty {
            logger.notice("the tenant cache's periodic check dropped changed apps", metadata: ["apps": "\(changed.count)"])
        }
    }

    private func load(_ appID: AppID) async throws -> Tenant? {
        guard let app = try await store.app(appID) else { return nil }
        let settings = app.settings
        let stored = try await store.keys(of: appID)
        var active: (keyID: KeyID, signer: any RS256Signer)?
        if let key = stored.first(where: { $0.status == .active }) {
            active = (key.keyID, try makeSigner(try key.open(with: masterKey)))
        }
        let keySet = stored.compactMap { PublicJWK(publicKeyPEM: $0.publicKeyPEM, keyID: $0.keyID) }
        // Plugins and profiles read their secrets opened; the tenant keeps the settings as stored.
        let opened = try plugins.openingSecrets(of: settings, with: masterKey)
        let verifiers = plugins.verifiers(for: opened, services: pluginServices)
        for case let (type, .failure(error)) in verifiers {
            logger.warning(
                "an app's credential type is unusable",
                metadata: ["app_id": "\(appID)", "credential_type": "\(type)", "reason": "\(error.message)"])
        }
        let minters = plugins.profiles.minters(for: opened, keys: AppSigningKeys(
                active: active, publicKeys: Dictionary(stored.map { ($0.keyID, $0.publicKeyPEM) }, uniquingKeysWith: { first, _ in first }),
                makeSigner: makeSigner))
        for case let (profile, .failure(error)) in minters where error.code != .noSigningKey {
            logger.warning(
                "an app's token profile is unusable",
                metadata: ["app_id": "\(appID)", "token_profile": "\(profile)", "reason": "\(error.message)"])
        }
        var tenant = Tenant(settings: settings, keySet: keySet, verifiers: verifiers, minters: minters)
        tenant.version = AppVersion(app: app, keys: stored)
        return tenant
    }
}
