import Foundation
import GatewayCore
import GatewayRuntime
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
@testable import PasswordPlugin
import Testing

/// A password app that asks a human check on the token route, against a
/// stand-in of Turnstile's siteverify: the check comes before the password
/// is hashed, a request without it spends nothing of the user's failure
/// budget, and a token signs in once.
@Suite struct PasswordHumanCheckTests {
    @Test func aSignInPassesTheHumanCheckBeforeItsPasswordIsChecked() async throws {
        let turnstile = TurnstileStandIn()
        try await FakeHTTPServer.with(answering: { turnstile.answer($0) }) { verifier, _ in
            try await TestGateway.with(plugins: .passwordTests) { gateway in
                let created = try await gateway.createPasswordApp()
                let check = turnstile.settings(verifier)
                let token = try await gateway.operatorToken()
                var options: [String: any Sendable] = ["argon2": cheapArgon2, "human_check": check]
                let updated = try await gateway.admin(
                    .patch, "/admin/v1/apps/\(created.appID)", token: token, json: ["plugins": ["password": options]])
                #expect(updated.status == .ok, "\(text(updated))")
                gateway.tenants.invalidate(created.appID)
                let app = created
                try await gateway.putUser("ada", in: app, token: token, ["password": "analytical engine"])

                func signIn(_ password: String, _ captcha: String?) async throws -> TestResponse {
                    var body = passwordRequest(app, user: "ada", password: password)
                    var credentials = body["credentials"] as! [String: any Sendable]
                    credentials["captcha_token"] = captcha
                    body["credentials"] = credentials
                    let request = body
                    return try await gateway.test { try await $0.postJSON(request) }
                }
                // Twenty sign-ins without a check: each refused before the password, none counted against ada.
                for _ in 0..<20 {
                    let refused = try await signIn("analytical engine", nil)
                    #expect(refused.status == .forbidden && text(refused).contains("human_check_required"), "\(text(refused))")
                }
                let foreign = try await signIn("analytical engine", turnstile.issue(hostname: "evil.example"))
                #expect(foreign.status == .forbidden && text(foreign).contains("human_check_failed"))
                let wrong = try await signIn("wrong password", turnstile.issue())
                #expect(wrong.status == .unauthorized, "a passed check, then the password decides")
                let good = turnstile.issue()
                #expect(try await signIn("analytical engine", good).status == .ok, "user_failures untouched by the refused checks")
                #expect(try await signIn("analytical engine", good).status == .forbidden, "a token signs in once")
                let rows = try await gateway.auditRows()
                #expect(rows.filter { $0.reason == "human_check_required" }.count == 20)
                #expect(rows.filter { $0.reason == "bad_password" }.count == 1)

                // The secret is write-only; an app admin may not turn the check off.
                let appAdmin = try await gateway.adminToken(.app(app.appID))
                options["human_check"] = nil
                let loosened = try await gateway.admin(
                    .patch, "/admin/v1/apps/\(app.appID)", token: appAdmin, json: ["plugins": ["password": options]])
                #expect(loosened.status == .forbidden && text(loosened).contains("plugins.password.human_check"), "\(text(loosened))")
                #expect(!text(try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: token)).contains(TurnstileStandIn.secret))
            }
        }
    }
}
