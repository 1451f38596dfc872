import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// `/admin/v1/apps/{app_id}/users`: the password directory's admin routes.
@Suite struct UserAdminTests {
    @Test func putCreatesThenReplacesAndNoAnswerShowsTheHash() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let path = TestGateway.userPath("ada", in: app)
            let created = try await gateway.admin(
                .put, path, token: token,
                json: ["password": "analytical engine", "first_name": "Ada", "avatar_url": "https://example.com/a.png"])
            #expect(created.status == .created)
            let body = try jsonObject(created)
            #expect(body["user_id"] as? String == "ada")
            #expect(body["first_name"] as? String == "Ada")
            #expect(body["disabled"] as? Bool == false)
            #expect(body["password_scheme"] as? String == "argon2id")
            // An empty profile field means none (openapi.yaml says so).
            let replaced = try await gateway.admin(
                .put, path, token: token, json: ["password": "difference engine", "first_name": " ", "avatar_url": ""])
            #expect(replaced.status == .ok)
            #expect(try jsonObject(replaced)["first_name"] == nil)
            #expect(try jsonObject(replaced)["avatar_url"] == nil)
            let read = try await gateway.admin(.get, path, token: token)
            let list = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users", token: token)
            for response in [created, replaced, read, list] {
                #expect(!text(response).contains("$argon2"))
                #expect(!text(response).contains("engine"))
            }
            let events = try await gateway.auditRows().map(\.event)
            #expect(events == ["admin.user.created", "admin.user.replaced"])
            for row in try await gateway.auditRows() { #expect(!row.text.contains("engine") && !row.text.contains("$argon2")) }
        }
    }

    @Test func patchChangesOnlyWhatIsSentAndNullClears() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let path = TestGateway.userPath("ada", in: app)
            try await gateway.putUser(
                "ada", in: app, token: token,
                ["password": "analytical engine", "first_name": "Ada", "last_name": "Lovelace"])
            let hashBefore = try await gateway.storedHash(of: "ada", in: app)
            let patched = try await gateway.admin(
                .patch, path, token: token, json: ["last_name": NSNull(), "display_name": "Countess", "disabled": true])
            #expect(patched.status == .ok)
            let body = try jsonObject(patched)
            #expect(body["first_name"] as? String == "Ada")
            #expect(body["last_name"] == nil)
            #expect(body["display_name"] as? String == "Countess")
            #expect(body["disabled"] as? Bool == true)
            #expect(try await gateway.storedHash(of: "ada", in: app) == hashBefore)

            let newPassword = try await gateway.admin(
                .patch, path, token: token, json: ["password": "difference engine", "disabled": false])
            #expect(newPassword.status == .ok)
            let (old, new) = try await gateway.test { client in
                (
                    try await client.postJSON(passwordRequest(app, user: "ada", password: "analytical engine")),
                    try await client.postJSON(passwordRequest(app, user: "ada", password: "difference engine"))
                )
            }
            #expect(old.status == .unauthorized)
            #expect(new.status == .ok)
            let missing = try await gateway.admin(
                .patch, TestGateway.userPath("nobody", in: app), token: token, json: ["disabled": true])
            #expect(missing.status == .notFound)
        }
    }

    @Test func deleteRemovesTheUserOnce() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            try await gateway.putUser("ada", in: app, token: token, ["password": "analytical engine"])
            let path = TestGateway.userPath("ada", in: app)
            #expect(try await gateway.admin(.delete, path, token: token).status == .noContent)
            #expect(try await gateway.admin(.delete, path, token: token).status == .notFound)
            #expect(try await gateway.admin(.get, path, token: token).status == .notFound)
            let login = try await gateway.test {
                try await $0.postJSON(passwordRequest(app, user: "ada", password: "analytical engine"))
            }
            #expect(login.status == .unauthorized)
        }
    }

    @Test func userIDsWithReservedCharactersRoundTripThroughThePath() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let userID = "team/ada+1@example.com ü"
            try await gateway.putUser(userID, in: app, token: token, ["password": "analytical engine"])
            let read = try await gateway.admin(.get, TestGateway.userPath(userID, in: app), token: token)
            #expect(try jsonObject(read)["user_id"] as? String == userID)
            let login = try await gateway.test {
                try await $0.postJSON(passwordRequest(app, user: userID, password: "analytical engine"))
            }
            #expect(login.status == .ok)
        }
    }

    /// A user id a token request would refuse cannot be stored either; a NUL
    /// anywhere in the path or query is a 400, not a database error.
    @Test func userIDsThatCouldNeverSignInAre400() async throws {
        try await TestGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let base = "/admin/v1/apps/\(app.appID)/users"
            let control = try await gateway.admin(.put, base + "/a%01b", token: token, json: ["password": "analytical engine"])
            #expect(control.status == .badRequest)
            #expect(try errorBody(control)["message"] as? String == "The user_id in the path must not contain control characters.")
            for method: HTTPRequest.Method in [.get, .delete] {
                let nul = try await gateway.admin(method, base + "/a%00b", token: token)
                #expect(try errorBody(nul)["message"] as? String == "The user_id in the path must not contain control characters.")
            }
            let query = try await gateway.admin(.get, "/admin/v1/audit_events?user_id=a%00b", token: token)
            #expect(query.status == .badRequest)
            #expect(try errorBody(query)["message"] as? String == "A value in the request holds a character that cannot be stored (NUL).")
        }
    }

    @Test func listFiltersByPrefixAndPagesInUserIDOrder() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let hash = "$argon2id$v=19$m=4096,t=3,p=1$c29tZXNhbHQ$qLml5cbqFAO6YxVHhrSBHP0UWdxrIxkNcM8aMX3blzU"
            for userID in ["team-c", "team-a", "other", "team-b", "team_x"] {
                try await gateway.putUser(userID, in: app, token: token, ["password_hash": hash])
            }
            var seen: [String] = []
            var cursor: String?
            repeat {
                let query = "prefix=team-&limit=2" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try jsonObject(try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users?\(query)", token: token))
                let items = try #require(page["items"] as? [[String: Any]])
                seen += items.compactMap { $0["user_id"] as? String }
                cursor = page["next_cursor"] as? String
            } while cursor != nil
            #expect(seen == ["team-a", "team-b", "team-c"])
            let bad = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users?cursor=%%%", token: token)
            #expect(bad.status == .badRequest)
        }
    }

    @Test(arguments: [
        (["password": "short"], "at least 8 characters"),
        (["password": "          "], "whitespace"),
        (["password": String(repeating: "é", count: 513)], "1024 bytes"),
        (["password": "analytical engine", "password_hash": "$2b$04$x"], "not both"),
        (["password_hash": "md5:5f4dcc3b5aa765d61d8327deb882cf99"], "password_hash must be"),
        (["password_hash": "$2b$31$abcdefghijklmnopqrstuuabcdefghijklmnopqrstuvwxyz01234"], "password_hash must be"),
        // A signed cost, which the bcrypt library does not read: no login could ever verify it.
        (["password_hash": "$2b$+9$abcdefghijklmnopqrstuuabcdefghijklmnopqrstuvwxyz01234"], "password_hash must be"),
        // Non-canonical base64 (found by scripts/fuzz): libsodium refuses it at every login.
        (["password_hash": "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmazObG"], "password_hash must be"),
        (["first_name": "Ada"], "password or password_hash is required"),
        (["password": "analytical engine", "avatar_url": "javascript:alert(1)"], "avatar_url"),
        (["password": "analytical engine", "avatar_url": "/relative.png"], "avatar_url"),
        (["password": "analytical engine", "avatar_url": "https://example.com/" + String(repeating: "a", count: 2029)], "2048 bytes"),
        (["password": "analytical engine", "first_name": String(repeating: "a", count: 257)], "256 bytes"),
        (["password": "analytical engine", "admin": true], "admin is not a field"),
        (["password": "analytical engine", "disabled": "yes"], "disabled must be true or false"),
    ] as [([String: any Sendable], String)])
    func badWritesAre400sNamingTheRule(body: [String: any Sendable], expected: String) async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let response = try await gateway.admin(.put, TestGateway.userPath("ada", in: app), token: token, json: body)
            #expect(response.status == .badRequest)
            let message = try #require(try errorBody(response)["message"] as? String)
            #expect(message.contains(expected), "\(message)")
            if let password = body["password"] as? String, password.count > 3 { #expect(!message.contains(password)) }
        }
    }

    @Test func anAppCanRaiseItsMinimumLengthButNotBreakTheBounds() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp(minLength: 12)
            let token = try await gateway.adminToken(.operator)
            let short = try await gateway.admin(
                .put, TestGateway.userPath("ada", in: app), token: token, json: ["password": "eleven chrs"])
            #expect(short.status == .badRequest)
            for options: [String: any Sendable] in [
                ["min_length": 7], ["argon2": ["memory_kib": 4096]], ["argon2": ["iterations": 11]],
                ["argon2": ["lanes": 2]], ["pepper": "x"],
            ] {
                let response = try await gateway.admin(
                    .patch, "/admin/v1/apps/\(app.appID)", token: token,
                    json: ["credential_types": ["password"], "plugins": ["password": options]])
                #expect(response.status == .badRequest, "\(options)")
                #expect((try errorBody(response)["message"] as? String)?.contains("plugins.password") == true)
            }
        }
    }

    @Test func appScopedTokensSeeOnlyTheirOwnAppsUsers() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let mine = try await gateway.createPasswordApp()
            let other = try await gateway.createPasswordApp()
            let operatorToken = try await gateway.adminToken(.operator)
            try await gateway.putUser("ada", in: other, token: operatorToken, ["password": "analytical engine"])
            let token = try await gateway.adminToken(.app(mine.appID))
            #expect(try await gateway.admin(.get, TestGateway.userPath("ada", in: other), token: token).status == .notFound)
            #expect(try await gateway.admin(.get, "/admin/v1/apps/\(other.appID)/users", token: token).status == .notFound)
            let own = try await gateway.admin(
                .put, TestGateway.userPath("bob", in: mine), token: token, json: ["password": "builder of things"])
            #expect(own.status == .created)
            #expect(try await gateway.admin(.get, TestGateway.userPath("bob", in: mine), token: nil).status == .unauthorized)
            let missingApp = try await gateway.admin(
                .put, "/admin/v1/apps/\(UUID())/users/ada", token: operatorToken, json: ["password": "analytical engine"])
            #expect(missingApp.status == .notFound)
        }
    }
}
