import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Testing

/// Creating, reading, changing and deleting apps; every write audited.
@Suite struct AppAdminTests {
    @Test func createsReadsUpdatesAndDeletesAnAppAuditingEachWrite() async throws {
        try await TestGateway.with { gateway in
            let token = try await gateway.adminToken(.operator)
            let appID = UUID()
            let created = try await gateway.test {
                try await $0.admin(.post, "/admin/v1/apps", token: token, json: newAppBody(appID, name: "  Shop  "))
            }
            #expect(created.status == .created)
            let app = try jsonObject(created)
            #expect(app["app_id"] as? String == "layer:///apps/staging/\(appID.lowercasedText)")
            #expect(app["name"] as? String == "Shop")
            #expect(app["token_ttl_seconds"] as? Int == 120)
            #expect(app["enabled"] as? Bool == true)
            #expect(app["credential_types"] as? [String] == ["static"])

            let again = try await gateway.test { try await $0.admin(.post, "/admin/v1/apps", token: token, json: newAppBody(appID)) }
            #expect(again.status == .conflict)

            let path = "/admin/v1/apps/layer%3A%2F%2F%2Fapps%2Fstaging%2F\(appID.uuidString)"
            let patched = try await gateway.test {
                try await $0.admin(.patch, path, token: token, json: ["token_ttl_seconds": 600, "enabled": false])
            }
            #expect(try jsonObject(patched)["token_ttl_seconds"] as? Int == 600)
            #expect(try jsonObject(patched)["enabled"] as? Bool == false)
            #expect(try jsonObject(patched)["name"] as? String == "Shop")

            let deleted = try await gateway.test { try await $0.admin(.delete, path, token: token) }
            #expect(deleted.status == .noContent)
            let gone = try await gateway.test { try await $0.admin(.get, path, token: token) }
            #expect(gone.status == .notFound)

            let rows = try await gateway.client.query(
                "SELECT event, actor IS NOT NULL, detail::text FROM audit_events WHERE app_id = \(appID) ORDER BY id",
                logger: TestDatabase.logger)
            var events: [String] = []
            for try await (event, hasActor, detail) in rows.decode((String, Bool, String).self) {
                events.append(event)
                #expect(hasActor)
                if event == "admin.app.updated" { #expect(detail.contains("enabled,token_ttl_seconds")) }
            }
            #expect(events == ["admin.app.created", "admin.app.updated", "admin.app.deleted"])
        }
    }

    @Test(arguments: [
        (["token_ttl_seconds": 29], "token_ttl_seconds must be between 30 and 600."),
        (["token_ttl_seconds": 601], "token_ttl_seconds must be between 30 and 600."),
        (["token_ttl_seconds": "60"], "token_ttl_seconds must be a whole number."),
        (["provider_id": "layer:///apps/x"], "provider_id must be"),
        (["environment": "staging"], "environment must be development or production."),
        (["credential_types": ["static", "telepathy"]], "credential_types: 'telepathy' is not offered by this gateway"),
        (["credential_types": [String]()], "credential_types must name at least one"),
        (["plugins": ["password": [String: String]()]], "plugins.password: 'password' is not among credential_types."),
        (["plugins": ["static": ["allow_anyone": true]]], "plugins.static.allow_anyone is not an option"),
        (["environment": "production"], "Static test users are only available to development apps."),
        (["colour": "blue"], "colour is not a field of this request."),
        // Members inside the body's objects are named by their whole path.
        (["rate_limits": ["ip": ["limit": 5, "period_seconds": 60, "burst": 1]]], "rate_limits.ip.burst is not a known option."),
        (["rate_limits": ["ip": ["limit": 5.5, "period_seconds": 60]]], "rate_limits.ip.limit must be a whole number."),
        (["name": ""], "name must be 1 to 200 bytes."),
        (["app_id": UUID().uuidString], "app_id cannot be changed."),
    ] as [([String: any Sendable], String)])
    func badSettingsAre400NamingTheField(_ change: [String: any Sendable], _ message: String) async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp()
            let token = try await gateway.adminToken(.operator)
            let response = try await gateway.test { try await $0.admin(.patch, "/admin/v1/apps/\(app.appID)", token: token, json: change) }
            #expect(response.status == .badRequest)
            #expect((try jsonObject(response)["message"] as? String)?.hasPrefix(message) == true, "\(text(response))")
        }
    }

    /// What `JSONDecoder` would take but the admin API refuses: a member
    /// named twice, U+0000 in any string (PostgreSQL stores none; it was a
    /// 500), nesting past 32 levels.
    @Test(arguments: [
        (#"{"name":"a","name":"b"}"#, "The body names a member twice."),
        (#"{"name":"a\u0000b"}"#, #"name must not contain the NUL character (\u0000)."#),
        (
            #"{"plugins":{"static":{"allow_any_user":true,"users":[{"user_id":"x","display_name":"\u0000"}]}}}"#,
            #"plugins.static.users[0].display_name must not contain the NUL character (\u0000)."#
        ),
        (#"{"a\u0000":1}"#, #"A member name must not contain the NUL character (\u0000)."#),
        (#"{"x":"# + String(repeating: "[", count: 33) + String(repeating: "]", count: 33) + "}",
         "The body nests arrays and objects deeper than 32 levels."),
    ])
    func bodiesAreReadStrictly(_ body: String, _ message: String) async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp()
            let token = try await gateway.adminToken(.operator)
            let response = try await gateway.test {
                try await $0.execute(
                    uri: "/admin/v1/apps/\(app.appID)", method: .patch,
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                    body: ByteBuffer(string: body))
            }
            #expect(response.status == .badRequest)
            #expect(try jsonObject(response)["message"] as? String == message)
        }
    }

    @Test func creationNeedsTheRequiredFields() async throws {
        try await TestGateway.with { gateway in
            let token = try await gateway.adminToken(.operator)
            var body = newAppBody()
            body["provider_id"] = nil
            let sent = body
            let response = try await gateway.test { try await $0.admin(.post, "/admin/v1/apps", token: token, json: sent) }
            #expect(try jsonObject(response)["message"] as? String == "provider_id is required.")
            let notJSON = try await gateway.test {
                try await $0.execute(uri: "/admin/v1/apps", method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "text/plain"])
            }
            #expect(notJSON.status == .unsupportedMediaType)
        }
    }

    @Test func paginationReturnsEveryAppOnce() async throws {
        try await TestGateway.with { gateway in
            for _ in 0..<5 { try await gateway.createApp() }
            let token = try await gateway.adminToken(.operator)
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let query = "/admin/v1/apps?limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try jsonObject(try await gateway.test { try await $0.admin(.get, query, token: token) })
                seen += (page["items"] as? [[String: Any]] ?? []).compactMap { $0["app_id"] as? String }
                // Present on every page, null on the last, as openapi.yaml requires.
                #expect(page.keys.contains("next_cursor"))
                cursor = page["next_cursor"] as? String
                pages += 1
            } while cursor != nil && pages < 10
            #expect(pages == 3)
            #expect(seen.count == 5)
            #expect(Set(seen).count == 5)
            #expect(seen == seen.sorted())
            let bad = try await gateway.test { try await $0.admin(.get, "/admin/v1/apps?limit=0", token: token) }
            #expect(bad.status == .badRequest)
            let forged = try await gateway.test { try await $0.admin(.get, "/admin/v1/apps?cursor=zzz", token: token) }
            #expect(forged.status == .badRequest)
        }
    }

    @Test func adminTokensAreShownOnceAndRevocationIsImmediate() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp()
            let operatorToken = try await gateway.adminToken(.operator)
            let created = try await gateway.test {
                try await $0.admin(.post, "/admin/v1/admin_tokens", token: operatorToken, json: ["name": "ci", "scope": "app:layer:///apps/production/\(app.appID)"])
            }
            #expect(created.status == .created)
            let body = try jsonObject(created)
            let secret = try #require(body["token"] as? String)
            #expect(secret.hasPrefix("igw_") && secret.count == 47)
            #expect(body["scope"] as? String == "app:\(app.appID)")
            let id = try #require(body["id"] as? String)

            let listed = try await gateway.test { try await $0.admin(.get, "/admin/v1/admin_tokens", token: operatorToken) }
            #expect(!text(listed).contains(secret))
            #expect(text(listed).contains(id))

            let works = try await gateway.test { try await $0.admin(.get, "/admin/v1/apps/\(app.appID)", token: secret) }
            #expect(works.status == .ok)
            let revoked = try await gateway.test { try await $0.admin(.delete, "/admin/v1/admin_tokens/\(id)", token: operatorToken) }
            #expect(revoked.status == .noContent)
            let refused = try await gateway.test { try await $0.admin(.get, "/admin/v1/apps/\(app.appID)", token: secret) }
            #expect(refused.status == .unauthorized)

            let stored = try await gateway.client.query("SELECT count(*) FROM admin_tokens WHERE secret_hash::text LIKE '%' || \(secret) || '%'", logger: TestDatabase.logger)
            for try await count in stored.decode(Int.self) { #expect(count == 0) }
            let audit = try await gateway.client.query("SELECT count(*) FROM audit_events WHERE audit_events::text LIKE '%' || \(secret) || '%'", logger: TestDatabase.logger)
            for try await count in audit.decode(Int.self) { #expect(count == 0) }

            for bad in [["name": "x", "scope": "app:\(UUID())"], ["name": "x", "scope": "root"], ["name": "x", "scope": "operator", "expires_at": "2001-01-01T00:00:00Z"]] {
                let response = try await gateway.test { try await $0.admin(.post, "/admin/v1/admin_tokens", token: operatorToken, json: bad) }
                #expect(response.status == .badRequest, "\(bad)")
            }
        }
    }
}
