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
        cache.entries[loading] = .loading(Task { nil })
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
