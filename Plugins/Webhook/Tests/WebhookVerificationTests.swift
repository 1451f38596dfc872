import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayOutbound
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing
import WebhookPlugin

/// What each answer of the tenant's service comes to: the client's status,
/// the audit row's reason, and what reached the service.
@Suite struct WebhookVerificationTests {
    @Test func aValidAnswerIsATokenWithTheTenantsProfile() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base + "/verify")
                let response = try await gateway.webhookLogin(app, user: "valid-ada", extra: ["otp": "123456"])
                #expect(response.status == .ok, "\(text(response))")
                let claims = try claims(of: response)
                #expect(claims["prn"] as? String == "valid-ada")
                #expect(claims["first_name"] as? String == "Ada")
                #expect(claims["display_name"] as? String == "Ada L.")
                #expect(claims["avatar_url"] as? String == "https://example.com/ada.png")
                #expect(try await gateway.auditReason(of: response) == nil)

                // One signed question, with only the forwarded fields, under the request's id.
                let asked = try #require(tenant.requests.first)
                #expect(tenant.requests.count == 1)
                #expect(asked.path == "/verify")
                #expect(FakeTenant.signatureHolds(asked))
                #expect(asked.json["app_id"] as? String == app.appID.description)
                #expect(asked.json["user_id"] as? String == "valid-ada")
                #expect(asked.json["credentials"] as? [String: String] == ["password": "right"])
                #expect(asked.json["request_id"] as? String == response.headers[HTTPField.Name("x-request-id")!])
                let timestamp = try #require(asked.json["timestamp"] as? Int)
                #expect(abs(Double(timestamp) - Date().timeIntervalSince1970) < 60)
            }
        }
    }

    /// Logins one after another share one connection to the tenant.
    @Test func callsKeepTheirConnection() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base)
                for index in 1...5 { #expect(try await gateway.webhookLogin(app, user: "valid-\(index)").status == .ok) }
                let ports = Set(tenant.requests.map(\.clientPort))
                #expect(tenant.requests.count == 5)
                #expect(ports.count == 1, "\(ports)")
            }
        }
    }

    /// Every answer but a valid or invalid one is a 502 with its reason in
    /// the audit trail: never a 401, never a token.
    @Test func eachOtherAnswerIsA502WithItsReason() async throws {
        let cases: [(user: String, status: HTTPResponse.Status, reason: String)] = [
            ("nobody-1", .unauthorized, "webhook_rejected"),
            ("valid-wrong", .unauthorized, "webhook_rejected"),
            ("error-1", .badGateway, "webhook_bad_status"),
            ("garbage-1", .badGateway, "webhook_bad_answer"),
            ("odd-1", .badGateway, "webhook_bad_answer"),
            ("control-1", .badGateway, "webhook_bad_answer"),
            ("huge-1", .badGateway, "webhook_answer_too_large"),
            ("redirect-1", .badGateway, "webhook_redirect"),
        ]
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                // The breaker stays out of this test: each failure is its own.
                let app = try await gateway.createWebhookApp(
                    url: base + "/verify", ["circuit_breaker": .object(["failures": .number(100)])])
                for (user, status, reason) in cases {
                    let password = user == "valid-wrong" ? "wrong" : "right"
                    let response = try await gateway.webhookLogin(app, user: user, password: password)
                    #expect(response.status == status, "\(user): \(text(response))")
                    #expect(identityToken(in: response) == nil)
                    let error = try errorBody(response)
                    #expect(
                        error["error"] as? String
                            == (status == .badGateway ? "credential_service_unavailable" : "invalid_credentials"), "\(user)")
                    #expect(try await gateway.auditReason(of: response) == reason, "\(user)")
                    // Nothing of the tenant's answer reaches the client.
                    #expect(!text(response).contains("html") && !text(response).contains("valid\""), "\(user)")
                }
                // The redirect was not followed.
                #expect(!tenant.requests.contains { $0.path == "/elsewhere" })
                #expect(tenant.requests.count == cases.count)

                // No whole answer within the app's timeout (short here; the others' is long enough for a busy machine).
                let hurried = try await gateway.createWebhookApp(url: base + "/verify", ["timeout_ms": .number(300)])
                let slow = try await gateway.webhookLogin(hurried, user: "slow-1")
                #expect(slow.status == .badGateway)
                #expect(try await gateway.auditReason(of: slow) == "webhook_timeout")
            }
        }
    }

    /// A forged signature is the tenant's to catch: a wrong secret makes every answer a refusal (401 from the
    /// tenant), which the gateway reads as a failed service, not as a wrong password.
    @Test func aWrongSecretIsAServiceFailureNotAWrongPassword() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, ["secret": .string("another-secret-0123456789")])
                let response = try await gateway.webhookLogin(app, user: "valid-ada")
                #expect(response.status == .badGateway)
                #expect(try await gateway.auditReason(of: response) == "webhook_bad_status")
                #expect(tenant.requests.count == 1)
                #expect(!FakeTenant.signatureHolds(try #require(tenant.requests.first)))
            }
        }
    }

    @Test func missingFieldsAreA400BeforeAnyCall() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, ["forward_fields": .array([.string("password"), .string("otp")])])
                let noOTP = try await gateway.webhookLogin(app, user: "valid-ada")
                #expect(noOTP.status == .badRequest)
                #expect(try errorBody(noOTP)["message"] as? String == "credentials.otp is required for credentials of type webhook.")
                let noUser = try await gateway.test {
                    try await $0.postJSON([
                        "app_id": app.appID.uuid.uuidString, "nonce": "n",
                        "credentials": ["type": "webhook", "password": "right", "otp": "1"],
                    ])
                }
                #expect(noUser.status == .badRequest)
                #expect(tenant.requests.isEmpty)
                let both = try await gateway.webhookLogin(app, user: "valid-ada", extra: ["otp": "123456"])
                #expect(both.status == .ok)
                #expect(tenant.requests.first?.json["credentials"] as? [String: String] == ["password": "right", "otp": "123456"])
            }
        }
    }

    /// SSRF: without the operator's `webhook.allow_private_addresses`, a
    /// webhook on the gateway's own network gets nothing.
    @Test func aPrivateAddressIsRefusedUnlessTheOperatorAllowsIt() async throws {
        let plugins = WebhookTestPlugins(addresses: OutboundAddressPolicy(allowsPrivateAddresses: false))
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                for url in [base, base.replacingOccurrences(of: "127.0.0.1", with: "localhost")] {
                    let app = try await gateway.createWebhookApp(url: url)
                    let response = try await gateway.webhookLogin(app, user: "valid-ada")
                    #expect(response.status == .badGateway, "\(url)")
                    #expect(try await gateway.auditReason(of: response) == "webhook_address_refused", "\(url)")
                }
                #expect(tenant.requests.isEmpty)
            }
        }
    }
}
