import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Testing

/// Creating, reading, changing and deleting apps; every write audited, and
/// no admin token's secret stored. What the API answers to bad requests is
/// tested over memory (`AppAdminRequestTests` in GatewayHTTPUnitTests).
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
