import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayOutbound
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing
import WebhookPlugin

/// The webhook's options through the admin API, and its test route.
@Suite struct WebhookAdminTests {
    static func appBody(_ options: [String: any Sendable], environment: String = "development") -> [String: any Sendable] {
        [
            "app_id": UUID().lowercasedText, "name": "webhook", "environment": environment,
            "provider_id": UUID().uuidString, "credential_types": ["webhook"], "plugins": ["webhook": options],
        ]
    }

    static let valid: [String: any Sendable] = ["url": "https://users.example.com/verify", "secret": tenantSecret]

    @Test(arguments: [
        (["secret": tenantSecret], "plugins.webhook.url is required"),
        (["url": "https://users.example.com/verify"], "plugins.webhook.secret must be the secret itself"),
        (["url": "https://users.example.com/verify", "secret": "********"], "plugins.webhook.secret must be the secret itself"),
        (["url": "https://users.example.com/verify", "secret": "short"], "plugins.webhook.secret must be the secret itself"),
        (["url": "ftp://users.example.com/", "secret": tenantSecret], "plugins.webhook.url must be an absolute http(s) URL"),
        (["url": "https://user:pw@users.example.com/", "secret": tenantSecret], "must not carry a user name or password"),
        (["url": "https://0x7f.1/verify", "secret": tenantSecret], "must be a name or a canonical address"),
        (["url": "https://users.example.com/", "secret": tenantSecret, "timeout_ms": 60000], "plugins.webhook.timeout_ms"),
        (["url": "https://users.example.com/", "secret": tenantSecret, "forward_fields": ["type"]], "is not a credential field name"),
        (["url": "https://users.example.com/", "secret": tenantSecret, "forward_fields": [String]()], "forward_fields must be a list of 1 to 8 entries"),
        (["url": "https://users.example.com/", "secret": tenantSecret, "migrate_on_success": "ldap"], "migrate_on_success must be password or null"),
        (
            ["url": "https://users.example.com/", "secret": tenantSecret, "migrate_on_success": "password", "forward_fields": ["otp"]],
            "needs \"password\" among forward_fields"
        ),
        (["url": "https://users.example.com/", "secret": tenantSecret, "circuit_breaker": ["failures": 0]], "circuit_breaker.failures"),
        (["url": "https://users.example.com/", "secret": tenantSecret, "retries": 3], "retries"),
    ] as [([String: any Sendable], String)])
    func badOptionsAreA400NamingThem(_ options: [String: any Sendable], _ message: String) async throws {
        try await MemoryGateway.with(plugins: WebhookTestPlugins().registry) { gateway in
            let token = try await gateway.adminToken(.operator)
            let response = try await gateway.admin(.post, "/admin/v1/apps", token: token, json: Self.appBody(options))
            #expect(response.status == .badRequest)
            #expect((try errorBody(response)["message"] as? String ?? "").contains(message), "\(text(response))")
        }
    }

    @Test func aProductionAppNeedsHTTPS() async throws {
        try await MemoryGateway.with(plugins: WebhookTestPlugins().registry) { gateway in
            let token = try await gateway.adminToken(.operator)
            let plain = try await gateway.admin(
                .post, "/admin/v1/apps", token: token,
                json: Self.appBody(["url": "http://users.example.com/verify", "secret": tenantSecret], environment: "production"))
            #expect(plain.status == .badRequest)
            #expect((try errorBody(plain)["message"] as? String ?? "").contains("must be https in a production app"))
            let secure = try await gateway.admin(.post, "/admin/v1/apps", token: token, json: Self.appBody(Self.valid, environment: "production"))
            #expect(secure.status == .created, "\(text(secure))")
        }
    }

    /// Write-only and sealed at rest; the sealed secret still signs.
    @Test func theSecretIsNeverShownAndIsSealedAtRest() async throws {
        try await TestGateway.with(plugins: WebhookTestPlugins().registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let token = try await gateway.adminToken(.operator)
                // The tenant answers from this test process, which a full run keeps busy: 10 s, not the default 2.
                let body = Self.appBody(["url": base, "secret": tenantSecret, "timeout_ms": 10_000])
                let appID = body["app_id"] as! String
                let created = try await gateway.admin(.post, "/admin/v1/apps", token: token, json: body)
                #expect(created.status == .created, "\(text(created))")
                #expect(!text(created).contains(tenantSecret))
                let read = try await gateway.admin(.get, "/admin/v1/apps/\(appID)", token: token)
                #expect(!text(read).contains(tenantSecret))
                #expect(text(read).contains("********"))
                let stored = try await gateway.client.query(
                    "SELECT plugins::text FROM apps WHERE app_id = \(UUID(uuidString: appID)!)", logger: TestDatabase.logger)
                for try await row in stored.decode(String.self) {
                    #expect(!row.contains(tenantSecret))
                    #expect(row.contains("sealed:v1:"))
                }
                _ = try await gateway.admin(.post, "/admin/v1/apps/\(appID)/keys", token: token, json: ["generate": ["bits": 2048]])
                let app = try await gateway.tenants.tenant(for: AppID(appID)!).settings
                let login = try await gateway.webhookLogin(app, user: "valid-ada")
                #expect(login.status == .ok, "\(text(login))")
                #expect(FakeTenant.signatureHolds(try #require(tenant.requests.first)))
            }
        }
    }

    @Test func theTestRouteShowsHowTheGatewayReadTheAnswer() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, ["circuit_breaker": .object(["failures": .number(1)])])
                let path = "/admin/v1/apps/\(app.appID)/webhook:test"
                let token = try await gateway.adminToken(.app(app.appID))

                let valid = try await gateway.admin(
                    .post, path, token: token, json: ["user_id": "valid-ada", "credentials": ["password": "right"]])
                #expect(valid.status == .ok, "\(text(valid))")
                let answer = try jsonObject(valid)
                #expect(answer["outcome"] as? String == "valid")
                #expect((answer["identity"] as? [String: Any])?["first_name"] as? String == "Ada")
                #expect(answer["latency_ms"] is Int)
                #expect(FakeTenant.signatureHolds(try #require(tenant.requests.last)))

                let invalid = try jsonObject(try await gateway.admin(.post, path, token: token, json: ["user_id": "nobody"]))
                #expect(invalid["outcome"] as? String == "invalid")
                #expect(tenant.requests.last?.json["credentials"] as? [String: String] == ["password": "test"])

                // A failure shows its reason, never the service's own answer, and leaves the breaker closed.
                let failed = try await gateway.admin(.post, path, token: token, json: ["user_id": "garbage-1"])
                #expect(try jsonObject(failed)["outcome"] as? String == "failed")
                #expect(try jsonObject(failed)["reason"] as? String == "webhook_bad_answer")
                #expect(!text(failed).contains("html"))
                #expect(!plugins.webhook.isCircuitOpen(for: app.appID))

                let tested = try await gateway.auditRows().filter { $0.event == "admin.webhook.tested" }
                #expect(tested.map(\.reason) == [nil, "webhook_rejected", "webhook_bad_answer"])
            }
        }
    }

    /// An app's own admin aims the webhook at the gateway's network and
    /// fires the test route: refused before anything is sent.
    @Test func anAppAdminCannotReachThePrivateNetworkThroughTheWebhook() async throws {
        let plugins = WebhookTestPlugins(addresses: OutboundAddressPolicy(allowsPrivateAddresses: false))
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { inside, tenant in
                let app = try await gateway.createWebhookApp(url: "https://users.example.com/verify")
                let token = try await gateway.adminToken(.app(app.appID))
                for url in [inside, inside.replacingOccurrences(of: "127.0.0.1", with: "localhost"), "http://169.254.169.254/latest"] {
                    let aimed = try await gateway.admin(
                        .patch, "/admin/v1/apps/\(app.appID)", token: token,
                        json: ["plugins": ["webhook": ["url": url, "secret": tenantSecret]]])
                    #expect(aimed.status == .ok, "\(text(aimed))")
                    let fired = try jsonObject(try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/webhook:test", token: token))
                    #expect(fired["outcome"] as? String == "failed", "\(url)")
                    #expect(fired["reason"] as? String == "webhook_address_refused", "\(url)")
                }
                #expect(tenant.requests.isEmpty)
            }
        }
    }

    @Test func theTestRouteIsForTheAppsOwnAdminsAndWebhookApps() async throws {
        try await MemoryGateway.with(plugins: WebhookTestPlugins().registry) { gateway in
            let app = try await gateway.createWebhookApp(url: "http://127.0.0.1:9/")
            let other = try await gateway.createApp()
            let path = "/admin/v1/apps/\(app.appID)/webhook:test"
            #expect(try await gateway.admin(.post, path, token: nil).status == .unauthorized)
            let stranger = try await gateway.adminToken(.app(other.appID))
            #expect(try await gateway.admin(.post, path, token: stranger).status == .notFound)
            let operatorToken = try await gateway.adminToken(.operator)
            let notWebhook = try await gateway.admin(.post, "/admin/v1/apps/\(other.appID)/webhook:test", token: operatorToken)
            #expect(notWebhook.status == .conflict)
            let unknown = try await gateway.admin(.post, "/admin/v1/apps/\(UUID().lowercasedText)/webhook:test", token: operatorToken)
            #expect(unknown.status == .notFound)
            let strange = try await gateway.admin(.post, path, token: operatorToken, json: ["user": "x"])
            #expect(strange.status == .badRequest)
        }
    }
}
