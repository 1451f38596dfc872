import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayOutbound
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// `webhook:test` costs a call out to the tenant's service: it is charged to
/// the admin token and to the app on counters every replica shares, and where
/// private addresses are allowed it says no more than whether the call worked.
@Suite struct WebhookTestRouteLimitTests {
    static let perToken = 6
    static let perApp = 10
    static let period = 600

    /// Small budgets over ten minutes: the deployment's defaults shape, at a size a test can spend.
    static var settings: RateLimitSettings {
        var settings = RateLimitSettings()
        settings.policies[RateLimitPolicy.adminWorkPerToken.name] = RateLimitPolicy.adminWorkPerToken.with(limit: perToken, periodSeconds: period)
        settings.policies[RateLimitPolicy.adminWorkPerApp.name] = RateLimitPolicy.adminWorkPerApp.with(limit: perApp, periodSeconds: period)
        return settings
    }

    /// The most a sliding window lets through for `limit`: a burst that
    /// straddles a window's edge may pass the previous window's count times the
    /// share of the window the burst took (docs/limits-and-audit.md, "Rate limits").
    static func most(_ limit: Int, burstOf requests: Int, lasting burst: Duration) -> Int {
        limit + Int((Double(requests) * (burst / .seconds(period))).rounded(.up))
    }

    /// Fires `calls[i]` test calls with token `i`, all at once, alternating
    /// replicas; the answers, and how long the burst took.
    private func fire(
        _ calls: [Int], tokens: [String], path: String, on gateways: [any GatewayUnderTest]
    ) async throws -> ([TestResponse], Duration) {
        let started = ContinuousClock.now
        let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
            var index = 0
            for (token, count) in zip(tokens, calls) {
                for _ in 0..<count {
                    let gateway = gateways[index % gateways.count]
                    index += 1
                    group.addTask { try await gateway.admin(.post, path, token: token, json: nil) }
                }
            }
            return try await group.reduce(into: [TestResponse]()) { $0.append($1) }
        }
        return (answers, ContinuousClock.now - started)
    }

    @Test func oneTokensTestCallsStopAtItsBudgetAcrossTwoReplicas() async throws {
        let plugins = WebhookTestPlugins()
        try await TestGateway.with(plugins: plugins.registry, rateLimits: Self.settings) { first in
            try await first.withReplica { second in
                try await FakeTenant.with { base, tenant in
                    let app = try await first.createWebhookApp(url: base)
                    let token = try await first.adminToken(.app(app.appID))
                    let path = "/admin/v1/apps/\(app.appID)/webhook:test"
                    let (answers, burst) = try await fire([2 * Self.perToken], tokens: [token], path: path, on: [first, second])
                    let answered = answers.filter { $0.status == .ok }.count
                    let refused = answers.filter { $0.status == .tooManyRequests }
                    #expect(answered + refused.count == answers.count)
                    #expect(answered >= 1 && answered <= Self.most(Self.perToken, burstOf: answers.count, lasting: burst), "\(answered) answered in \(burst)")
                    #expect(tenant.requests.count == answered)
                    for response in refused {
                        #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 >= 1)
                        #expect(response.headers[HTTPField.Name("RateLimit")!]?.hasPrefix("\"admin_work_token\";r=0;") == true)
                        #expect(try jsonObject(response)["error"] as? String == "rate_limited")
                    }
                }
            }
        }
    }

    @Test func manyTokensOfOneAppShareTheAppsBudget() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry, rateLimits: Self.settings) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base)
                var tokens: [String] = []
                for _ in 0..<4 { tokens.append(try await gateway.adminToken(.app(app.appID))) }
                // Each token stays within its own budget; together they ask for more than the app's.
                let each = Self.perToken - 1
                #expect(4 * each > Self.perApp)
                let (answers, burst) = try await fire(
                    Array(repeating: each, count: 4), tokens: tokens, path: "/admin/v1/apps/\(app.appID)/webhook:test", on: [gateway])
                let answered = answers.filter { $0.status == .ok }.count
                #expect(answered >= 1 && answered <= Self.most(Self.perApp, burstOf: answers.count, lasting: burst), "\(answered) answered in \(burst)")
                // Every call the tenant saw was admitted; an admitted call that timed out on a loaded
                // machine is answered `failed` and may never have reached it.
                let reached = answers.filter { $0.status == .ok && (try? jsonObject($0)["outcome"] as? String) != "failed" }.count
                #expect(tenant.requests.count <= answered)
                #expect(tenant.requests.count >= reached)
                #expect(answers.filter { $0.status == .tooManyRequests }.count == answers.count - answered)
            }
        }
    }

    @Test func withPrivateAddressesAllowedTheVerdictIsOnlyOkOrFailed() async throws {
        let plugins = WebhookTestPlugins(addresses: OutboundAddressPolicy(allowsPrivateAddresses: true))
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, _ in
                let app = try await gateway.createWebhookApp(url: base)
                let token = try await gateway.adminToken(.app(app.appID))
                let path = "/admin/v1/apps/\(app.appID)/webhook:test"
                let cases: [([String: any Sendable], String)] = [
                    (["user_id": "valid-ada", "credentials": ["password": "right"]], "ok"),
                    (["user_id": "nobody"], "ok"),
                    (["user_id": "garbage-1"], "failed"),
                    (["user_id": "error-1"], "failed"),
                ]
                for (body, outcome) in cases {
                    let response = try await gateway.admin(.post, path, token: token, json: body)
                    #expect(response.status == .ok)
                    #expect(try jsonObject(response) as NSDictionary == ["outcome": outcome] as NSDictionary, "\(text(response))")
                }
                // A closed port says no more than a service that answered badly.
                let closed = try await gateway.createWebhookApp(url: "http://127.0.0.1:9/")
                let refused = try await gateway.admin(
                    .post, "/admin/v1/apps/\(closed.appID)/webhook:test", token: try await gateway.adminToken(.app(closed.appID)))
                #expect(try jsonObject(refused) as NSDictionary == ["outcome": "failed"] as NSDictionary)
            }
        }
    }
}
