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
        try await withMemoryConsoleGateway { gateway in
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

    @Test func formsNeedTheSessionsOwnCSRFToken() async throws {
        try await withMemoryConsoleGateway { gateway in
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
                let tokenID = try await adminTokenID(named: "console operator", gateway)
                #expect(rows.count == 1)
                #expect(rows.first?.text.lowercased().contains(tokenID.lowercased()) == true)
            }
        }
    }

    @Test func behindTLSTheCookieIsSecureAndHostOnly() async throws {
        try await withMemoryConsoleGateway(settings: ConsoleSettings(secureCookie: true)) { gateway in
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
}
