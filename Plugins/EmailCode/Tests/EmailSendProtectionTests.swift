import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// The email channel's send protection on every route that mails a code:
/// the human check (against a stand-in of Turnstile's siteverify) before
/// anything is queued, and `email_daily_budget` across the routes.
@Suite struct EmailSendProtectionTests {
    @Test func everyMailingRouteAsksTheHumanCheckAndSpendsOneBudget() async throws {
        let turnstile = TurnstileStandIn()
        try await FakeHTTPServer.with(answering: { turnstile.answer($0) }) { verifier, _ in
            try await SMTPSink.with { sink in
                try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                    let check = turnstile.settings(verifier)
                    let app = try await gateway.createSelfServiceApp(sink) { app in
                        app.plugins["email_code"] = .object([
                            "sender": sink.sender("starttls"), "from": .string("accounts@shop.example"),
                            "send_protection": .object([
                                "human_check": .object([
                                    "provider": .string("turnstile"), "secret": .string(TurnstileStandIn.secret),
                                    "hostnames": .array([.string(TurnstileStandIn.hostname)]), "action": .string(TurnstileStandIn.action),
                                    "verify_url": .string(check["verify_url"] as! String),
                                ])
                            ]),
                        ])
                        app.rateLimits["email_daily_budget"] = RateLimitOverride(limit: 3, periodSeconds: 86_400)
                    }
                    let grace = "grace@example.com"
                    let signUp: [String: any Sendable] = ["email": grace, "password": "correct horse battery"]
                    func email(_ token: String?) async throws -> TestResponse {
                        var body: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "email": grace]
                        body["captcha_token"] = token
                        let request = body
                        return try await gateway.test { try await $0.postJSON(request, to: "/v1/email_codes") }
                    }
                    func with(_ body: [String: any Sendable], _ token: String) -> [String: any Sendable] {
                        body.merging(["captcha_token": token]) { $1 }
                    }

                    for refused in [
                        try await email(nil), try await gateway.account("sign_up", app, signUp),
                        try await gateway.account("password_reset", app, ["email": grace]),
                        try await gateway.account("verification", app, ["email": grace]),
                    ] {
                        #expect(refused.status == .forbidden && text(refused).contains("human_check_required"), "\(text(refused))")
                    }
                    #expect(try await Self.queued(in: gateway) == 0, "nothing queued without the check")

                    #expect(try await gateway.account("sign_up", app, with(signUp, turnstile.issue())).status == .accepted)
                    #expect(try await email(turnstile.issue()).status == .accepted)
                    #expect(try await gateway.account("password_reset", app, with(["email": grace], turnstile.issue())).status == .accepted)
                    // The budget is the app's, over every route that mails.
                    let spent = try await gateway.account("verification", app, with(["email": grace], turnstile.issue()))
                    #expect(spent.status == .tooManyRequests && text(spent).contains("send_budget_exhausted"), "\(text(spent))")
                    #expect(spent.headers[.retryAfter] != nil)
                    #expect(try await Self.queued(in: gateway) >= 1)
                }
            }
        }
    }

    static func queued(in gateway: TestGateway) async throws -> Int {
        let rows = try await gateway.client.query("SELECT count(*)::int8 FROM outbox", logger: TestDatabase.logger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }
}
