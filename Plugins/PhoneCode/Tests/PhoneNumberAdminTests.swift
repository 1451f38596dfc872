import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// `/admin/v1/apps/{app_id}/phone_numbers` and the phone plugin's options.
@Suite struct PhoneNumberAdminTests {
    @Test func numbersBindRebindListAndUnbind() async throws {
        try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
            let app = try await gateway.createPhoneApp()
            let token = try await gateway.adminToken(.operator)
            let base = "/admin/v1/apps/\(app.appID)/phone_numbers"
            let rebound = try await gateway.admin(.put, base + "/+4915112345678", token: token, json: ["user_id": "ada2"])
            #expect(rebound.status == .ok)
            #expect(try jsonObject(rebound)["user_id"] as? String == "ada2")
            #expect(try jsonObject(rebound)["first_name"] == nil)
            let second = try await gateway.admin(
                .put, base + "/%2B14155550123", token: token, json: ["user_id": "bob", "email": " bob@example.com "])
            #expect(second.status == .created)
            #expect(try jsonObject(second)["email"] as? String == "bob@example.com")
            let badEmail = try await gateway.admin(.put, base + "/%2B14155550124", token: token, json: ["user_id": "bob", "email": "bob"])
            #expect(try jsonObject(badEmail)["message"] as? String == "email must be an email address (name@domain) of at most 254 bytes.")
            let page = try jsonObject(try await gateway.admin(.get, base + "?limit=1", token: token))
            let items = try #require(page["items"] as? [[String: Any]])
            #expect(items.compactMap { $0["phone_number"] as? String } == ["+14155550123"])
            let cursor = try #require(page["next_cursor"] as? String)
            let next = try jsonObject(try await gateway.admin(.get, base + "?limit=1&cursor=\(cursor)", token: token))
            #expect((next["items"] as? [[String: Any]])?.first?["phone_number"] as? String == ada)
            #expect(try await gateway.admin(.delete, base + "/%2B14155550123", token: token).status == .noContent)
            #expect(try await gateway.admin(.delete, base + "/%2B14155550123", token: token).status == .notFound)
            #expect(try await gateway.admin(.get, base + "/%2B14155550123", token: token).status == .notFound)
            for bad in ["/4915112345678", "/+49-151"] {
                #expect(try await gateway.admin(.put, base + bad, token: token, json: ["user_id": "x"]).status == .badRequest)
            }
            #expect(try await gateway.admin(.put, base + "/+4915100000000", token: token, json: ["user": "x"]).status == .badRequest)
            let control = try await gateway.admin(.put, base + "/+4915100000000", token: token, json: ["user_id": "a\u{7}"])
            #expect(try jsonObject(control)["message"] as? String == "user_id must not contain control characters.")
            let foreign = try await gateway.adminToken(.app(AppID(uuid: UUID())))
            #expect(try await gateway.admin(.get, base, token: foreign).status == .notFound)
            let events = try await gateway.auditRows().map(\.event)
            #expect(events.contains("admin.phone_number.rebound") && events.contains("admin.phone_number.unbound"))
        }
    }

    /// Deleting a user from the app's password directory unbinds every
    /// number of theirs, each with an `admin.phone_number.unbound` row whose
    /// reason is `user_deleted`: a code already sent to one of them then
    /// signs nobody in, a session a sign-in in flight writes after it ends
    /// (the verifier's lapse: no number left), and a user created again under
    /// the same id is bound to none. Another user's number stays bound.
    @Test func aUserDeletedFromTheDirectoryKeepsNoNumberInMemory() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodesWithDirectory) { gateway in
                try await Self.deleteAUserWithNumbers(gateway, webhook: base, sent: { webhook.requests.last?.sentCode })
            }
        }
    }

    @Test func aUserDeletedFromTheDirectoryKeepsNoNumberInPostgreSQL() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await TestGateway.with(plugins: .phoneCodesWithDirectory) { gateway in
                try await Self.deleteAUserWithNumbers(gateway, webhook: base, sent: { webhook.requests.last?.sentCode })
            }
        }
    }

    static func deleteAUserWithNumbers(
        _ gateway: some GatewayUnderTest, webhook: String, sent: () -> String?
    ) async throws {
        let app = try await gateway.createApp(activeKey: true) { app in
            app.credentialTypes = ["password", "phone_code"]
            app.plugins = [
                "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
                "phone_code": .object([
                    "sender": .object(["type": .string("webhook"), "url": .string(webhook), "secret": .string(webhookSecret)])
                ]),
            ]
        }
        let token = try await gateway.operatorToken()
        let users = "/admin/v1/apps/\(app.appID)/users/"
        let numbers = "/admin/v1/apps/\(app.appID)/phone_numbers/"
        for user in ["ada", "bob"] {
            #expect(try await gateway.admin(.put, users + user, token: token, json: ["password": "analytical engine"]).status == .created)
        }
        let adaSecond = "+4915100000009"
        let bob = "+14155550123"
        for (number, user) in [(ada, "ada"), (adaSecond, "ada"), (bob, "bob")] {
            let bound = try await gateway.admin(.put, numbers + number, token: token, json: ["user_id": user])
            #expect(bound.status == .created, "\(text(bound))")
        }
        #expect(try await gateway.requestCode(app).status == .accepted)
        let code = try #require(sent())
        // What a phone sign-in's session asks once written: whether its user still has a number.
        let verifier = try await gateway.tenants.tenant(for: app.appID).verifier(for: "phone_code")
        func lapse(_ user: String) async throws -> String? { try await verifier.lapse(of: VerifiedIdentity(userID: user), in: app) }
        #expect(try await lapse("ada") == nil)

        #expect(try await gateway.admin(.delete, users + "ada", token: token, json: nil).status == .noContent)
        #expect(try await lapse("ada") == "phone_number_unbound", "a sign-in in flight ends the session it wrote")
        #expect(try await lapse("bob") == nil)
        let refused = try await gateway.signIn(app, code: code)
        #expect(refused.status == .unauthorized)
        let denied = try await gateway.auditRows().last { $0.event == "token.denied" }
        #expect(denied?.reason == "unknown_number")
        for number in [ada, adaSecond] {
            #expect(try await gateway.admin(.get, numbers + number, token: token, json: nil).status == .notFound, "\(number)")
        }
        let rows = try await gateway.auditRows().filter { $0.event == "admin.phone_number.unbound" }
        #expect(rows.count == 2 && rows.allSatisfy { $0.userID == "ada" && $0.text.contains("user_deleted") }, "\(rows)")
        #expect(Set(rows.compactMap { row in [ada, adaSecond].first { row.text.contains($0) } }) == [ada, adaSecond])

        // Created again under the same id: bound to no number. Bob's stays.
        #expect(try await gateway.admin(.put, users + "ada", token: token, json: ["password": "difference engine"]).status == .created)
        #expect(try await gateway.admin(.get, numbers + ada, token: token, json: nil).status == .notFound)
        let kept = try await gateway.admin(.get, numbers + bob, token: token, json: nil)
        #expect(kept.status == .ok)
        #expect(try jsonObject(kept)["user_id"] as? String == "bob")
    }

    @Test func senderSecretsAreWriteOnlyAndOptionsAreReadStrictly() async throws {
        try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
            let app = try await gateway.createPhoneApp()
            let token = try await gateway.adminToken(.operator)
            let shown = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: token)
            #expect(!text(shown).contains(webhookSecret))
            let plugins = try #require(try jsonObject(shown)["plugins"] as? [String: Any])
            let sender = try #require((plugins["phone_code"] as? [String: Any])?["sender"] as? [String: Any])
            #expect(sender["secret"] as? String == "********")

            for (options, expected) in [
                (["sender": ["type": "webhook", "url": "http://127.0.0.1:9/", "secret": "********"]], "sender.secret"),
                (["sender": ["type": "webhook", "url": "ftp://x/", "secret": webhookSecret]], "sender.url"),
                (["sender": ["type": "pigeon"]], "sender.type"),
                (["sender": ["type": "log"], "code_length": 3], "code_length"),
                (["sender": ["type": "log"], "code_ttl_seconds": 901], "code_ttl_seconds"),
                (["sender": ["type": "log"], "allowed_prefixes": ["49"]], "allowed_prefixes"),
                (["sender": ["type": "log"], "retries": 3], "retries"),
                ([:], "sender is required"),
            ] as [([String: any Sendable], String)] {
                let response = try await gateway.admin(
                    .patch, "/admin/v1/apps/\(app.appID)", token: token, json: ["plugins": ["phone_code": options]])
                #expect(response.status == .badRequest, "\(options)")
                let message = (try errorBody(response)["message"] as? String) ?? ""
                #expect(message.contains(expected), "\(message)")
            }
            var production = newAppBody()
            production["environment"] = "production"
            production["credential_types"] = ["phone_code"]
            production["plugins"] = ["phone_code": ["sender": ["type": "log"]]] as [String: any Sendable]
            let refused = try await gateway.admin(.post, "/admin/v1/apps", token: token, json: production)
            #expect(refused.status == .badRequest)
            #expect(text(refused).contains("development apps only"))
        }
    }
}
