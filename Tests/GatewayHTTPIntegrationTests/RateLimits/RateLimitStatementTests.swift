import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayPostgres
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// What a token costs PostgreSQL under the limits (the limits' decisions
/// themselves are tested over memory, in GatewayHTTPUnitTests).
@Suite struct RateLimitStatementTests {
    /// Static users answer from memory, so a token's counters and audit row
    /// take one statement, and a refused request writes no issued row.
    @Test func aStaticUserTokenTakesOneStatementAndARefusalIssuesNothing() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp { $0.rateLimits = ["ip": RateLimitOverride(limit: 2, periodSeconds: 60)] }
            // In memory already: an app not yet loaded costs its client's `ip` count on its own first.
            _ = try await gateway.dependencies.tenants.tenant(for: app.appID)
            let before = gateway.ledger.statistics
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(try await gateway.test { try await $0.postJSON(aliceRequest(app)) }.status.code)
            }
            #expect(statuses == [200, 200, 429])
            let after = gateway.ledger.statistics
            // One statement a token; the refusal's own, then its denial row's.
            #expect(after.batches - before.batches == 4)
            #expect(after.admissions - before.admissions == 3)
            let rows = try await gateway.auditRows()
            #expect(rows.map(\.event) == ["token.issued", "token.issued", "token.denied"])
            #expect(rows.map(\.reason) == [nil, nil, "rate_limited"])
            // The row as PostgreSQL writes a record, its JSON quotes doubled.
            #expect(rows[2].text.contains("\"\"policy\"\": \"\"ip\"\""))
        }
    }
}
