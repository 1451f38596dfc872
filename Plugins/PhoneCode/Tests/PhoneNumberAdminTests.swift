import Foundation
import GatewayCore
import GatewayHTTPTestSupport
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
