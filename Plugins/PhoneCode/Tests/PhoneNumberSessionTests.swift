import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Issue 76, "also decide": a user who loses their last number, unbound or
/// bound to someone else, loses the sessions a phone code began, as a
/// sign-in written after the change already ended its own. While a number
/// is left they stay (a session does not record which number began it).
@Suite struct PhoneNumberSessionTests {
    @Test func losingTheLastNumberEndsThePhoneSessionsInMemory() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                try await Self.check(gateway, webhook: base, sent: { webhook.requests.last?.sentCode })
            }
        }
    }

    @Test func losingTheLastNumberEndsThePhoneSessionsInPostgreSQL() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
                try await Self.check(gateway, webhook: base, sent: { webhook.requests.last?.sentCode })
            }
        }
    }

    static func check(_ gateway: some GatewayUnderTest, webhook: String, sent: () -> String?) async throws {
        let app = try await gateway.createApp(activeKey: true) { app in
            app.credentialTypes = ["phone_code"]
            app.sessions = SessionSettings()
            app.plugins = [
                "phone_code": .object([
                    "sender": .object(["type": .string("webhook"), "url": .string(webhook), "secret": .string(webhookSecret)])
                ])
            ]
        }
        let token = try await gateway.operatorToken()
        let numbers = "/admin/v1/apps/\(app.appID)/phone_numbers/"
        let second = "+4915100000009"
        for number in [ada, second] {
            #expect(try await gateway.admin(.put, numbers + number, token: token, json: ["user_id": "ada"]).status == .created)
        }
        #expect(try await gateway.requestCode(app).status == .accepted)
        let signedIn = try jsonObject(try await gateway.signIn(app, code: try #require(sent())))
        var session = try #require(signedIn["refresh_token"] as? String, "\(signedIn)")
        func refreshes() async throws -> Bool {
            let body: [String: any Sendable] = [
                "app_id": app.appID.uuid.uuidString, "nonce": "n-\(UUID())",
                "credentials": ["type": "refresh_token", "refresh_token": session],
            ]
            let answer = try await gateway.test(over: .router) { try await $0.postJSON(body) }
            guard answer.status == .ok else { return false }
            session = try #require(try jsonObject(answer)["refresh_token"] as? String)
            return true
        }

        // The number that began it goes; another is left: the session stays.
        #expect(try await gateway.admin(.delete, numbers + ada, token: token, json: nil).status == .noContent)
        #expect(try await refreshes(), "ada still has a number")
        // The last one is bound to bob: ada's phone session ends, with its row.
        #expect(try await gateway.admin(.put, numbers + second, token: token, json: ["user_id": "bob"]).status == .ok)
        #expect(try await !refreshes(), "ada has no number left")
        let ended = try await gateway.auditRows().filter { $0.event == "session.revoked" }
        #expect(ended.count == 1 && ended[0].userID == "ada" && ended[0].text.contains("phone_number_unbound"), "\(ended.map(\.text))")
        let unbound = try await gateway.auditRows().first { $0.event == "admin.phone_number.unbound" }
        #expect(unbound?.userID == "ada", "the unbinding's row names whose number it was")
    }
}
