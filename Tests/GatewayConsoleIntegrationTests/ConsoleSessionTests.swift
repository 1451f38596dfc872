import Foundation
import GatewayConsole
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// Sign-in, sessions and CSRF: nothing without a live session, nothing posted
/// without the session's own CSRF token, and a session ends with sign-out,
/// expiry or its admin token.
@Suite struct ConsoleSessionTests {
    /// Every page, and every form, asked without a session.
    static let pages = [
        "/console", "/console/apps", "/console/apps/\(UUID().lowercasedText)", "/console/apps/\(UUID().lowercasedText)/keys",
        "/console/apps/\(UUID().lowercasedText)/users", "/console/apps/\(UUID().lowercasedText)/phone-numbers",
        "/console/apps/\(UUID().lowercasedText)/audit", "/console/apps/\(UUID().lowercasedText)/audit/export", "/console/audit",
        "/console/audit/export", "/console/validator", "/console/admin-tokens",
    ]

    @Test func noPageOrActionWithoutASession() async throws {
        try await withConsoleGateway { gateway in
            let app = try await gateway.createApp()
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                for page in Self.pages {
                    let response = try await browser.get(page)
                    #expect(response.status == .seeOther, "\(page)")
                    #expect(response.location.hasPrefix("/console/sign-in"), "\(page) → \(response.location)")
                }
                // A form posted without a session changes nothing, even with a token-shaped CSRF value.
                let before = try await gateway.auditRows().count
                let appPath = "/console/apps/\(app.appID.uuid.lowercasedText)"
                for (path, fields) in [
                    ("/console/apps", [("name", "Sneaky"), ("credential_types", "static")]),
                    ("\(appPath)/settings", [("name", "Renamed"), ("token_ttl_seconds", "60"), ("credential_types", "static")]),
                    ("\(appPath)/enabled", [("enabled", "false")]), ("\(appPath)/delete", []),
                    ("/console/admin-tokens", [("name", "mine"), ("scope", "operator")]),
                ] {
                    let response = try await browser.post(path, fields, csrf: .some(String(repeating: "a", count: 43)))
                    #expect(response.status == .seeOther, "\(path)")
                    #expect(response.location.hasPrefix("/console/sign-in"), "\(path)")
                }
                #expect(try await gateway.auditRows().count == before)
            }
        }
    }

    @Test func signInNeedsItsOwnFormAndALiveToken() async throws {
        try await withConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let revoked = try await gateway.adminToken(.operator, revoked: true)
            let expired = try await gateway.adminToken(.operator, expiresAt: Date(timeIntervalSinceNow: -60))
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                // Posted from elsewhere: no sign-in cookie to match the form's value.
                let forged = try await browser.post("/console/sign-in", [("token", token)], csrf: .some("x"))
                #expect(forged.status == .forbidden)
                #expect(browser.cookies["gateway_console"] == nil)

                try await browser.get("/console/sign-in")
                for bad in [revoked, expired, "igw_not-a-token", AdminTokenSecret.generate().text] {
                    let refused = try await browser.post("/console/sign-in", [("token", bad)])
                    #expect(refused.status == .unauthorized)
                    #expect(text(refused).contains("unknown, revoked or expired"))
                    #expect(!text(refused).contains(bad), "the token typed is not shown back")
                    #expect(browser.cookies["gateway_console"] == nil)
                }

                // A stranger's sign-in is read up to 16 KiB: beyond, a 413 page.
                let huge = try await browser.post("/console/sign-in", [("token", String(repeating: "x", count: 20_000))])
                #expect(huge.status == .contentTooLarge && text(huge).contains("<!doctype html>"))

                let accepted = try await browser.post("/console/sign-in", [("token", token), ("next", "//evil.example/x")])
                #expect(accepted.status == .seeOther)
                #expect(accepted.location == "/console", "next only returns to a console page")
                let cookie = try #require(accepted.headers[values: .setCookie].first { $0.hasPrefix("gateway_console=") })
                #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && !cookie.contains("Secure"))
                let sessionID = try #require(browser.cookies["gateway_console"])
                #expect(!sessionID.contains(token) && !token.contains(sessionID))

                // The database holds the id's digest and the token sealed, neither in clear.
                let rows = try await gateway.client.query(
                    "SELECT encode(session_hash, 'escape'), encode(sealed_token, 'escape') FROM console_sessions",
                    logger: TestDatabase.logger)
                var stored: [(String, String)] = []
                for try await row in rows.decode((String, String).self) { stored.append(row) }
                #expect(stored.count == 1)
                #expect(stored.allSatisfy { !$0.0.contains(sessionID) && !$0.1.contains(token) })

                let apps = try await browser.get("/console")
                #expect(apps.location == "/console/apps")

                // Assets: the stylesheet and script, never a template or anything else.
                #expect(try await browser.get("/console/assets/console.css").headers[.contentType] == "text/css; charset=utf-8")
                for name in ["layout.mustache", "..%2Fconsole.css", "%2Fetc%2Fpasswd", "nothing.js"] {
                    #expect(try await browser.get("/console/assets/\(name)").status == .notFound, "\(name)")
                }
            }
        }
    }

    @Test func formsNeedTheSessionsOwnCSRFToken() async throws {
        try await withConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator, name: "console operator")
            let other = try await gateway.adminToken(.operator)
            try await gateway.test { client in
                var attacker = ConsoleBrowser(client)
                try await attacker.signIn(other)
                let attackerCSRF = try #require(attacker.csrf)

                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let fields = [("name", "Shop"), ("environment", "development"), ("credential_types", "password")]
                for csrf in [nil, "", attackerCSRF, String(repeating: "A", count: 43)] as [String?] {
                    let refused = try await browser.post("/console/apps", fields, csrf: .some(csrf))
                    #expect(refused.status == .forbidden, "csrf \(csrf ?? "none")")
                }
                #expect(try await gateway.auditRows().filter { $0.event == "admin.app.created" }.isEmpty)
                // A signed-in form is read up to three times the API's largest JSON body.
                let tooLarge = try await browser.post("/console/apps", fields + [("name", String(repeating: "x", count: 800 * 1024))])
                #expect(tooLarge.status == .contentTooLarge)

                let created = try await browser.post("/console/apps", fields)
                #expect(created.status == .seeOther)
                #expect(created.location.hasPrefix("/console/apps/") && created.location.hasSuffix("?notice=created"))
                // Audited under the signed-in token, as the API would have been.
                let rows = try await gateway.auditRows().filter { $0.event == "admin.app.created" }
                let tokenID = try await Self.tokenID(named: "console operator", gateway)
                #expect(rows.count == 1)
                #expect(rows.first?.text.contains(tokenID) == true)
            }
        }
    }

    @Test func signOutRevocationAndExpiryEndTheSession() async throws {
        try await withConsoleGateway { gateway in
            let operatorToken = try await gateway.adminToken(.operator)
            let doomed = try await gateway.adminToken(.operator, name: "doomed")
            try await gateway.test { client in
                // Sign-out: the old cookie no longer opens a page.
                var browser = ConsoleBrowser(client)
                try await browser.signIn(operatorToken)
                let kept = browser.cookies
                let signedOut = try await browser.post("/console/sign-out", [])
                #expect(signedOut.location == "/console/sign-in?notice=signed_out")
                #expect(browser.cookies["gateway_console"] == nil)
                browser.cookies = kept
                #expect(try await browser.get("/console/apps").location.hasPrefix("/console/sign-in"))

                // Revoking the session's token (from another session) ends it at its next page.
                var victim = ConsoleBrowser(client)
                try await victim.signIn(doomed)
                #expect(try await victim.get("/console/apps").status == .ok)
                var admin = ConsoleBrowser(client)
                try await admin.signIn(operatorToken)
                let doomedID = try await Self.tokenID(named: "doomed", gateway)
                let revoked = try await admin.post("/console/admin-tokens/\(doomedID)/revoke", [])
                #expect(revoked.location == "/console/admin-tokens?notice=revoked")
                #expect(try await victim.get("/console/apps").location.hasPrefix("/console/sign-in"))

                // An idle session past its expiry is gone.
                #expect(try await admin.get("/console/apps").status == .ok)
                try await gateway.client.query(
                    "UPDATE console_sessions SET expires_at = now() - interval '1 second'", logger: TestDatabase.logger)
                #expect(try await admin.get("/console/apps").location.hasPrefix("/console/sign-in"))
            }
            let left = try await gateway.client.query("SELECT count(*) FROM console_sessions WHERE expires_at > now()", logger: TestDatabase.logger)
            for try await count in left.decode(Int64.self) { #expect(count == 0) }
        }
    }

    @Test func behindTLSTheCookieIsSecureAndHostOnly() async throws {
        try await withConsoleGateway(settings: ConsoleSettings(secureCookie: true)) { gateway in
            let token = try await gateway.adminToken(.operator)
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                let form = try await browser.get("/console/sign-in")
                #expect(form.headers[values: .setCookie].allSatisfy { $0.hasPrefix("__Host-") && $0.contains("; Secure") })
                let accepted = try await browser.post("/console/sign-in", [("token", token)])
                let cookie = try #require(accepted.headers[values: .setCookie].first { $0.hasPrefix("__Host-gateway_console=") })
                #expect(cookie.contains("; Secure") && cookie.contains("Path=/") && !cookie.contains("Domain="))
            }
        }
    }

    static func tokenID(named name: String, _ gateway: TestGateway) async throws -> String {
        let rows = try await gateway.client.query(
            "SELECT token_id::text FROM admin_tokens WHERE name = \(name)", logger: TestDatabase.logger)
        for try await id in rows.decode(String.self) { return id }
        throw TestFailure("no token named \(name)")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
