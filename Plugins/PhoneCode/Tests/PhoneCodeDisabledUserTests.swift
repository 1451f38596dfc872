import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Issue 76.2: a user the password directory disabled signs in by no phone
/// code. The review's attack: alice disabled (her password refused), then a
/// right code for her bound number answered 200 and a fresh session. Now a
/// right code is refused (`user_disabled`) and starts nothing, in memory
/// and in PostgreSQL; enabled again, she signs in with the next code.
@Suite struct PhoneCodeDisabledUserTests {
    @Test func aDisabledUserSignsInByNoCodeInMemory() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodesWithDirectory) { gateway in
                try await Self.check(gateway, webhook: base, sent: { webhook.requests.last?.sentCode })
            }
        }
    }

    @Test func aDisabledUserSignsInByNoCodeInPostgreSQL() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await TestGateway.with(plugins: .phoneCodesWithDirectory) { gateway in
                try await Self.check(gateway, webhook: base, sent: { webhook.requests.last?.sentCode })
            }
        }
    }

    static func check(_ gateway: some GatewayUnderTest, webhook: String, sent: () -> String?) async throws {
        let app = try await gateway.createApp(activeKey: true) { app in
            app.credentialTypes = ["password", "phone_code"]
            app.sessions = SessionSettings()
            app.plugins = [
                "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
                "phone_code": .object([
                    "sender": .object(["type": .string("webhook"), "url": .string(webhook), "secret": .string(webhookSecret)])
                ]),
            ]
        }
        let token = try await gateway.operatorToken()
        let user = "/admin/v1/apps/\(app.appID)/users/alice"
        #expect(try await gateway.admin(.put, user, token: token, json: ["password": "analytical engine"]).status == .created)
        #expect(try await gateway.admin(.put, "/admin/v1/apps/\(app.appID)/phone_numbers/\(ada)", token: token, json: ["user_id": "alice"]).status == .created)
        #expect(try await gateway.admin(.patch, user, token: token, json: ["disabled": true]).status == .ok)

        #expect(try await gateway.requestCode(app).status == .accepted)
        let refused = try await gateway.signIn(app, code: try #require(sent()))
        #expect(refused.status == .unauthorized, "\(text(refused))")
        let body = try jsonObject(refused)
        #expect(body["identity_token"] == nil && body["refresh_token"] == nil)
        let denied = try await gateway.auditRows().last { $0.event == "token.denied" }
        #expect(denied?.reason == "user_disabled")
        let sessions = try jsonObject(try await gateway.admin(.get, user + "/sessions", token: token, json: nil))
        #expect((sessions["items"] as? [Any])?.isEmpty == true, "no session began: \(sessions)")

        #expect(try await gateway.admin(.patch, user, token: token, json: ["disabled": false]).status == .ok)
        #expect(try await gateway.requestCode(app).status == .accepted)
        let signedIn = try await gateway.signIn(app, code: try #require(sent()))
        #expect(signedIn.status == .ok, "\(text(signedIn))")
    }
}
