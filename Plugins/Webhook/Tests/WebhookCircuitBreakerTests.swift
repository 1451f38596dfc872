import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing
import WebhookPlugin

/// After N failures in a row an app's webhook is not called for a
/// cool-down; then one trial call decides whether it closes.
@Suite struct WebhookCircuitBreakerTests {
    @Test func theBreakerOpensFailsFastAndClosesAfterATrial() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let breaker: [String: JSONValue] = [
                    "circuit_breaker": .object(["failures": .number(3), "cool_down_seconds": .number(30)])
                ]
                let app = try await gateway.createWebhookApp(url: base, breaker)
                let neighbour = try await gateway.createWebhookApp(url: base, breaker)

                for _ in 1...3 { #expect(try await gateway.webhookLogin(app, user: "error-1").status == .badGateway) }
                #expect(tenant.requests.count == 3)
                #expect(plugins.webhook.isCircuitOpen(for: app.appID))

                // Open: answered at once, even for a user the tenant would admit, and nothing goes out.
                let fast = try await gateway.webhookLogin(app, user: "valid-ada")
                #expect(fast.status == .badGateway)
                #expect(try await gateway.auditReason(of: fast) == "webhook_circuit_open")
                #expect(tenant.requests.count == 3)
                // Another app's webhook is its own.
                #expect(try await gateway.webhookLogin(neighbour, user: "valid-ada").status == .ok)
                #expect(tenant.requests.count == 4)

                // After the cool-down one trial goes out; it fails, and the breaker opens again.
                plugins.clock.advance(seconds: 31)
                #expect(try await gateway.webhookLogin(app, user: "error-2").status == .badGateway)
                #expect(tenant.requests.count == 5)
                #expect(try await gateway.auditReason(of: try await gateway.webhookLogin(app, user: "valid-ada")) == "webhook_circuit_open")

                // The next trial succeeds: closed, and every call goes out again.
                plugins.clock.advance(seconds: 31)
                #expect(try await gateway.webhookLogin(app, user: "valid-ada").status == .ok)
                #expect(!plugins.webhook.isCircuitOpen(for: app.appID))
                #expect(try await gateway.webhookLogin(app, user: "nobody").status == .unauthorized)
                #expect(tenant.requests.count == 7)
            }
        }
    }

    /// Answers the service chose (a 4xx, a redirect, an unreadable or oversized
    /// body) may be a client's doing: they are 502s, but only a service that is
    /// failing (no connection, no answer in time, a 5xx) opens the breaker, so
    /// one client cannot switch an app's webhook off for everyone.
    @Test func onlyTheServicesOwnFailuresOpenTheBreaker() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, ["circuit_breaker": .object(["failures": .number(2)])])
                for user in ["refuse-1", "refuse-2", "garbage-1", "redirect-1", "huge-1", "odd-1", "refuse-3"] {
                    #expect(try await gateway.webhookLogin(app, user: user).status == .badGateway, "\(user)")
                }
                #expect(!plugins.webhook.isCircuitOpen(for: app.appID))
                #expect(tenant.requests.count == 7)
                for user in ["error-1", "error-2"] { #expect(try await gateway.webhookLogin(app, user: user).status == .badGateway) }
                #expect(plugins.webhook.isCircuitOpen(for: app.appID))
            }
        }
    }

    /// An invalid password is an answer: it never opens the breaker.
    @Test func refusalsAreAnswersNotFailures() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, ["circuit_breaker": .object(["failures": .number(2)])])
                for index in 1...4 { #expect(try await gateway.webhookLogin(app, user: "nobody-\(index)").status == .unauthorized) }
                #expect(!plugins.webhook.isCircuitOpen(for: app.appID))
                #expect(tenant.requests.count == 4)
            }
        }
    }
}

/// The gateway's limits hold for webhook logins as for others: a failure's
/// unit is reserved before the call, so no more calls reach the tenant
/// than the limit allows, over two instances at once.
@Suite struct WebhookLimitTests: ConcurrentAttack {
    @Test func wrongPasswordsReachTheTenantNoMoreThanTheLimitAllows() async throws {
        let plugins = WebhookTestPlugins()
        try await withTwoInstances(plugins: plugins.registry) { gateways in
            try await FakeTenant.with { base, tenant in
                let app = try await gateways[0].createWebhookApp(
                    url: base,
                    rateLimits: ["user_failures": RateLimitOverride(limit: 5, periodSeconds: 900)],
                    ["circuit_breaker": .object(["failures": .number(100)])])
                let wrong = try await statuses(on: gateways) { index in
                    Self.login(app, user: "valid-victim", password: "guess-\(index)")
                }
                #expect(count(wrong, 401) == 5)
                #expect(count(wrong, 429) == Self.attempts - 5)
                #expect(tenant.requests.count == 5)
                #expect(try await reasons(in: gateways[0])["webhook_rejected"] == 5)
            }
        }
    }

    /// A service that fails gives no free tries: each 502 counts as a failure.
    @Test func failedCallsCountAsFailures() async throws {
        let plugins = WebhookTestPlugins()
        try await withTwoInstances(plugins: plugins.registry) { gateways in
            try await FakeTenant.with { base, tenant in
                let app = try await gateways[0].createWebhookApp(
                    url: base,
                    rateLimits: ["user_failures": RateLimitOverride(limit: 4, periodSeconds: 900)],
                    ["circuit_breaker": .object(["failures": .number(100)])])
                let failed = try await statuses(on: gateways) { _ in Self.login(app, user: "error-victim", password: "x") }
                #expect(count(failed, 502) == 4)
                #expect(count(failed, 429) == Self.attempts - 4)
                #expect(tenant.requests.count == 4)
            }
        }
    }

    static func login(_ app: AppSettings, user: String, password: String) -> [String: any Sendable] {
        [
            "app_id": app.appID.uuid.uuidString, "user_id": user, "nonce": "n-\(UUID())",
            "credentials": ["type": "webhook", "password": password],
        ]
    }
}
