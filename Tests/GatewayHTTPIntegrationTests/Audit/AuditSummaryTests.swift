import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// What the console reads besides the resources themselves: token requests
/// per minute, the audit trail by reason, apps by search, and the calling
/// token's own record. Each follows the scope rules of the rest of the API.
@Suite struct AuditSummaryTests {
    @Test func tokenRequestsAreCountedPerMinuteByOutcomeAndReason() async throws {
        try await TestGateway.with(rateLimits: RateLimitSettings(isEnabled: false)) { gateway in
            let app = try await gateway.createApp()
            let other = try await gateway.createApp()
            let operatorToken = try await gateway.adminToken(.operator)
            let appToken = try await gateway.adminToken(.app(app.appID))
            try await gateway.test { client in
                for (target, password, times) in [(app, "wonderland", 3), (app, "wrong", 2), (other, "wonderland", 4)] {
                    for index in 0..<times {
                        var request = aliceRequest(target, nonce: "n\(index)")
                        request["credentials"] = ["type": "static", "password": password]
                        _ = try await client.postJSON(request)
                    }
                }
                let path = "/admin/v1/apps/\(app.appID.uuid.lowercasedText)/audit_events:per_minute"
                let counted = try jsonObject(try await client.admin(.get, path, token: appToken))
                let minutes = try #require(counted["minutes"] as? [[String: Any]])
                #expect(minutes.count == 60, "the last hour, every minute listed")
                #expect(minutes.reduce(0) { $0 + ($1["issued"] as? Int ?? 0) } == 3)
                #expect(minutes.reduce(0) { $0 + ($1["denied"] as? Int ?? 0) } == 2)
                let reasons = minutes.compactMap { $0["denied_by_reason"] as? [String: Int] }.filter { !$0.isEmpty }
                #expect(reasons.flatMap(\.keys).allSatisfy { $0 == "bad_password" })

                // Every app's, for operators only; the app filter narrows it.
                let everyApp = try jsonObject(try await client.admin(.get, "/admin/v1/audit_events:per_minute", token: operatorToken))
                #expect((everyApp["minutes"] as? [[String: Any]])?.reduce(0) { $0 + ($1["issued"] as? Int ?? 0) } == 7)
                let narrowed = try jsonObject(try await client.admin(
                    .get, "/admin/v1/audit_events:per_minute?app_id=\(other.appID.uuid.lowercasedText)", token: operatorToken))
                #expect((narrowed["minutes"] as? [[String: Any]])?.reduce(0) { $0 + ($1["issued"] as? Int ?? 0) } == 4)
                #expect(try await client.admin(.get, "/admin/v1/audit_events:per_minute", token: appToken).status == .forbidden)
                let otherPath = "/admin/v1/apps/\(other.appID.uuid.lowercasedText)/audit_events:per_minute"
                #expect(try await client.admin(.get, otherPath, token: appToken).status == .notFound)

                // Ranges: whole minutes, from before to, at most a day.
                let ranged = try jsonObject(try await client.admin(
                    .get, "\(path)?from=2026-01-01T10:00:30Z&to=2026-01-01T10:03:00Z", token: appToken))
                #expect((ranged["minutes"] as? [[String: Any]])?.compactMap { $0["minute"] as? String }
                    == ["2026-01-01T10:00:00Z", "2026-01-01T10:01:00Z", "2026-01-01T10:02:00Z"])
                for query in ["from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "from=2026-01-01T00:00:00Z&to=2026-01-02T00:01:00Z",
                              "from=yesterday"] {
                    #expect(try await client.admin(.get, "\(path)?\(query)", token: appToken).status == .badRequest, "\(query)")
                }

                // The trail itself, narrowed by reason.
                let denied = try jsonObject(try await client.admin(
                    .get, "/admin/v1/apps/\(app.appID.uuid.lowercasedText)/audit_events?reason=bad_password", token: appToken))
                let items = try #require(denied["items"] as? [[String: Any]])
                #expect(items.count == 2 && items.allSatisfy { $0["reason"] as? String == "bad_password" })
            }
        }
    }

    @Test func appsAreFoundByNameOrIdAndEachTokenReadsItself() async throws {
        try await TestGateway.with { gateway in
            let shop = try await gateway.createApp { $0.name = "Corner Shop" }
            let bakery = try await gateway.createApp { $0.name = "Bakery" }
            let operatorToken = try await gateway.adminToken(.operator, name: "ops")
            let appToken = try await gateway.adminToken(.app(shop.appID), name: "shop admin")
            try await gateway.test { client in
                func names(_ search: String) async throws -> [String] {
                    let query = search.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                    let page = try jsonObject(try await client.admin(.get, "/admin/v1/apps?search=\(query)", token: operatorToken))
                    return (page["items"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
                }
                #expect(try await names("shop") == ["Corner Shop"])
                #expect(try await names("R").sorted() == ["Bakery", "Corner Shop"], "any case")
                #expect(try await names("layer:///apps/staging/\(bakery.appID.uuid.lowercasedText)") == ["Bakery"])
                #expect(try await names("nothing like it").isEmpty)
                for bad in ["", String(repeating: "x", count: 201), "a\u{7}b"] {
                    let query = bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                    #expect(try await client.admin(.get, "/admin/v1/apps?search=\(query)", token: operatorToken).status == .badRequest)
                }
                #expect(try await client.admin(.get, "/admin/v1/apps?search=shop", token: appToken).status == .forbidden)

                let me = try jsonObject(try await client.admin(.get, "/admin/v1/me", token: appToken))
                #expect(me["name"] as? String == "shop admin")
                #expect(me["scope"] as? String == "app:\(shop.appID.uuid.lowercasedText)")
                #expect(me["token"] == nil, "never the secret")
                #expect(try jsonObject(try await client.admin(.get, "/admin/v1/me", token: operatorToken))["scope"] as? String == "operator")
                #expect(try await client.admin(.get, "/admin/v1/me", token: nil).status == .unauthorized)
            }
        }
    }
}
