import Foundation
import GatewayCore
@testable import GatewayHTTP
@testable import GatewayPluginKit
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
