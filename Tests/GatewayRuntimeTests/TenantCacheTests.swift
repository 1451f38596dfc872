import Foundation
import GatewayCore
import GatewayPluginKit
@testable import GatewayRuntime
import GatewayTestSupport
import Logging
import Synchronization
import Testing

/// The tenant cache's memory of unknown app ids: a flood of made-up ids is
/// held for seconds, not until the next reload.
@Suite struct TenantCacheTests {
    @Test func expiredUnknownIdsAreSweptOnceTheCacheDoubles() {
        var cache = TenantCache.Cache()
        let start = ContinuousClock.now
        let loading = AppID(uuid: UUID())
        cache[loading] = .loading(Task { nil })
        for _ in 0..<1022 { cache.rememberUnknown(AppID(uuid: UUID()), now: start) }
        #expect(cache.entries.count == 1023)

        // Still within their memory: the sweep at 1024 keeps them all and moves the next sweep to twice that.
        cache.rememberUnknown(AppID(uuid: UUID()), now: start)
        #expect(cache.entries.count == 1024)
        #expect(cache.sweepAt == 2048)

        let later = start + TenantCache.unknownAppMemory + .seconds(1)
        for _ in 0..<1023 { cache.rememberUnknown(AppID(uuid: UUID()), now: later) }
        #expect(cache.entries.count == 2047)
        let fresh = AppID(uuid: UUID())
        cache.rememberUnknown(fresh, now: later)
        // The 1023 expired ids went; the load under way and the 1024 fresh ones stayed.
        #expect(cache.entries.count == 1025)
        #expect(cache.entries[loading] != nil)
        #expect(cache.entries[fresh] != nil)
        #expect(cache.sweepAt == 2050)
        #expect(cache.knownCount == 0, "unknown ids and loads are not apps held")
    }

    /// `gateway_tenant_cache_apps` counts the apps held loaded, through every way an entry changes.
    @Test func theAppsHeldAreCountedAsEntriesChange() {
        var cache = TenantCache.Cache()
        let apps = (0..<3).map { _ in AppID(uuid: UUID()) }
        func tenant(_ appID: AppID) -> Tenant {
            let settings = AppSettings(
                appID: appID, name: "held", environment: .development, providerID: ProviderID(uuid: UUID()), credentialTypes: ["static"])
            return Tenant(settings: settings, verifiers: [:], minters: [:])
        }
        cache[apps[0]] = .loading(Task { nil })
        #expect(cache.knownCount == 0)
        cache[apps[0]] = .known(tenant(apps[0]))
        cache[apps[1]] = .known(tenant(apps[1]))
        #expect(cache.knownCount == 2)
        cache[apps[1]] = .known(tenant(apps[1]))
        #expect(cache.knownCount == 2, "an app loaded again is still one")
        cache.rememberUnknown(apps[2], now: .now)
        cache[apps[0]] = nil
        #expect(cache.knownCount == 1)
        cache[apps[1]] = .unknown(until: .now)
        #expect(cache.knownCount == 0)
        cache[apps[2]] = .known(tenant(apps[2]))
        cache.removeAll()
        #expect(cache.knownCount == 0 && cache.entries.isEmpty)
    }
}

/// An app changed while it was being loaded: the load that began after the
/// change (the invalidation) wins, whichever finishes first.
@Suite struct TenantCacheInvalidationTests {
    /// Answers each `app` read with the settings of the moment it was asked,
    /// once the test releases that read.
    final class GatedStore: TenantStore {
        let settings: Mutex<AppSettings>
        private let reads = Mutex<[CheckedContinuation<Void, Never>?]>([])
        let (started, announce) = AsyncStream.makeStream(of: Int.self)

        init(_ settings: AppSettings) { self.settings = Mutex(settings) }

        func app(_ appID: AppID) async throws -> StoredApp? {
            let read = settings.withLock { $0 }
            await withCheckedContinuation { continuation in
                let number = reads.withLock { reads in
                    reads.append(continuation)
                    return reads.count
                }
                announce.yield(number)
            }
            return StoredApp(settings: read, createdAt: Date(), updatedAt: Date())
        }

        func keys(of appID: AppID) async throws -> [StoredKey] { [] }

        /// Lets read `number` (from 1) answer.
        func release(_ number: Int) {
            reads.withLock { reads in
                defer { reads[number - 1] = nil }
                return reads[number - 1]
            }?.resume()
        }
    }

    @Test func aLoadThatBeganBeforeAnInvalidationDoesNotOverwriteALaterOne() async throws {
        var settings = AppSettings(
            appID: AppID(uuid: UUID()), name: "before", environment: .development, providerID: ProviderID(uuid: UUID()),
            credentialTypes: [])
        let store = GatedStore(settings)
        let stores = InMemoryStores().stores
        let cache = TenantCache(
            store: store, makeSigner: { _ in fatalError("no keys") }, plugins: PluginRegistry([]),
            pluginServices: PluginServices(
                storage: .memory(PluginMemory(recording: { _ in })), apps: stores.apps, sessions: stores.sessions,
                userChanges: stores.userChanges, logger: Logger(label: "test")),
            masterKey: try MasterKey(base64: MasterKey.generateBase64()),
            logger: Logger(label: "test"))
        let appID = settings.appID
        var reads = store.started.makeAsyncIterator()

        let early = Task { try await cache.tenant(for: appID) }
        #expect(await reads.next() == 1)
        // The app changes, and its notification arrives while the first load still waits on its read.
        settings.name = "after"
        store.settings.withLock { [settings] in $0 = settings }
        cache.invalidate(appID)
        let late = Task { try await cache.tenant(for: appID) }
        #expect(await reads.next() == 2)
        // The early load finishes first, then the late one.
        store.release(1)
        _ = try await early.value
        store.release(2)
        #expect(try await late.value.settings.name == "after")
        #expect(cache.cachedTenant(for: appID)?.settings.name == "after")
    }
}

/// The periodic safety net for a missed notification drops only the apps
/// whose version moved; it once dropped every app each minute, and a replica
/// holding 10 000 apps reloaded all of them, every minute.
@Suite struct TenantCacheRecheckTests {
    struct Unsure: TenantStore {
        let inner: any TenantStore
        let fails: Bool
        func app(_ appID: AppID) async throws -> StoredApp? { try await inner.app(appID) }
        func keys(of appID: AppID) async throws -> [StoredKey] { try await inner.keys(of: appID) }
        func versions() async throws -> [AppID: AppVersion]? {
            if fails { throw GatewayError.unavailable }
            return nil
        }
    }

    static func cache(_ store: any TenantStore, _ stores: GatewayStores) throws -> TenantCache {
        TenantCache(
            store: store, makeSigner: { _ in fatalError("no keys") }, plugins: PluginRegistry([]),
            pluginServices: PluginServices(
                storage: .memory(PluginMemory(recording: { _ in })), apps: stores.apps, sessions: stores.sessions,
                userChanges: stores.userChanges, logger: Logger(label: "test")),
            masterKey: try MasterKey(base64: MasterKey.generateBase64()), logger: Logger(label: "test"))
    }

    static func apps(_ count: Int, in stores: GatewayStores) async throws -> [AppID] {
        var ids: [AppID] = []
        for index in 0..<count {
            let app = AppSettings(
                appID: AppID(uuid: UUID()), name: "app \(index)", environment: .development, providerID: ProviderID(uuid: UUID()),
                credentialTypes: [])
            let event = AuditEvent(appID: app.appID, event: "admin.app.created", outcome: .success, requestID: "test")
            _ = try await stores.apps.create(app, recording: event)
            ids.append(app.appID)
        }
        return ids
    }

    @Test func theCheckDropsTheAppsThatChangedOrWentAndKeepsTheRest() async throws {
        let stores = InMemoryStores().stores
        let ids = try await Self.apps(4, in: stores)
        let cache = try Self.cache(stores.tenants, stores)
        for id in ids { _ = try await cache.tenant(for: id) }
        await cache.recheck()
        #expect(ids.allSatisfy { cache.cachedTenant(for: $0) != nil }, "nothing changed, nothing dropped")

        let event = AuditEvent(appID: ids[1], event: "admin.app.updated", outcome: .success, requestID: "test")
        _ = try await stores.apps.update(ids[1], recording: event) { stored in
            var settings = stored.settings
            settings.name = "renamed"
            return settings
        }
        _ = try await stores.apps.delete(ids[2], recording: event)
        await cache.recheck()
        #expect(cache.cachedTenant(for: ids[0]) != nil)
        #expect(cache.cachedTenant(for: ids[1]) == nil)
        #expect(cache.cachedTenant(for: ids[2]) == nil)
        #expect(cache.cachedTenant(for: ids[3]) != nil)
        #expect(try await cache.tenant(for: ids[1]).settings.name == "renamed")
    }

    @Test func aStoreThatCannotTellDropsEveryAppAndAFailedReadKeepsThem() async throws {
        let stores = InMemoryStores().stores
        let ids = try await Self.apps(2, in: stores)
        let failing = try Self.cache(Unsure(inner: stores.tenants, fails: true), stores)
        let unsure = try Self.cache(Unsure(inner: stores.tenants, fails: false), stores)
        for id in ids {
            _ = try await failing.tenant(for: id)
            _ = try await unsure.tenant(for: id)
        }
        await failing.recheck()
        await unsure.recheck()
        #expect(ids.allSatisfy { failing.cachedTenant(for: $0) != nil }, "the database away: keep what is held")
        #expect(ids.allSatisfy { unsure.cachedTenant(for: $0) == nil })
    }
}
