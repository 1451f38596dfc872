import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayRuntime
import HTTPTypes
import HummingbirdTesting
import Testing

/// A high limit spent from leased blocks (`CounterLeases`) attacked over two
/// instances on one database: no more tokens than the limit, only a little
/// less (each instance strands at most one block), and no token without its
/// audit row. The requests its blocks served are signed beside their rows'
/// statements; none that the limit refused was signed.
@Suite struct LeasedLimitTests: ConcurrentAttack {
    /// Requests sent, 32 at a time, alternating between the instances.
    static let requests = 800

    @Test func twoInstancesIssueNoMoreTokensThanALeasedLimit() async throws {
        // Leased from 640: blocks of at most 10 units.
        var settings = RateLimitSettings(leaseMinimumLimit: 640)
        // One client sends them all: its `ip` budget is set out of the way (and leased too).
        settings.policies["ip"] = RateLimitPolicy.clientIP.with(limit: 100_000, periodSeconds: 86_400)
        let signatures = SignatureCount()
        try await withTwoInstances(rateLimits: settings, signatures: signatures) { gateways in
            // 640 a day: leased, and no window edge within the test.
            let app = try await gateways[0].createApp {
                $0.rateLimits = ["app": RateLimitOverride(limit: 640, periodSeconds: 86_400)]
            }
            var statuses: [Int] = []
            for start in stride(from: 0, to: Self.requests, by: 32) {
                statuses += try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in start..<min(start + 32, Self.requests) {
                        let gateway = gateways[index % 2]
                        group.addTask {
                            Int(try await gateway.test { try await $0.postJSON(aliceRequest(app, nonce: "n\(index)")) }.status.code)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            let issued = count(statuses, 200)
            #expect(issued + count(statuses, 429) == Self.requests, "\(Set(statuses))")
            #expect(issued <= 640)
            // A block is at most 1/64 of the limit (10 units); each instance may also refuse one request uncounted.
            #expect(issued >= 640 - 2 * 10 - 2, "\(issued)")
            let rows = try await gateways[0].auditRows()
            #expect(rows.filter { $0.event == "token.issued" }.count == issued, "every token has its row")
            // Every signature is a token that left: a refused request cost none, and no signature begun beside
            // its row was dropped (a row not written, with nothing in the way here).
            #expect(signatures.value == issued, "\(signatures.value) signatures for \(issued) tokens")
        }
    }
}
