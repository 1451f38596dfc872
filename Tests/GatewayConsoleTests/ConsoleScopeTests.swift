import Foundation
import GatewayConsole
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// What a session may see and change is what its admin token may, exactly as
/// the API decides; and no secret typed into the console (a password, a
/// private key, an admin token after the page that created it, a plugin
/// secret) is ever rendered back.
@Suite struct ConsoleScopeTests {
    @Test func anAppScopedSessionSeesAndChangesItsAppOnly() async throws {
        try await withMemoryConsoleGateway { gateway in
            let mine = try await gateway.createApp { $0.name = "Mine" }
            let theirs = try await gateway.createApp { $0.name = "Theirs" }
            let token = try await gateway.adminToken(.app(mine.appID))
            let minePath = "/console/apps/\(mine.appID.uuid.lowercasedText)"
            let theirsPath = "/console/apps/\(theirs.appID.uuid.lowercasedText)"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                #expect(try await browser.get("/console").location == minePath)
                #expect(try await browser.get("/console/apps").location == minePath)
                #expect(try await browser.get("/console/audit").location == "\(minePath)/audit")
                let own = try await browser.get(minePath)
                #expect(own.status == .ok && text(own).contains("Mine"))
                #expect(!text(own).contains("Admin tokens"), "operator-only navigation is not offered")

                for page in ["", "/keys", "/users", "/phone-numbers", "/audit", "/audit/export"] {
                    let response = try await browser.get(theirsPath + page)
                    #expect(response.status == .notFound, "\(theirsPath + page)")
                    #expect(!text(response).contains("Theirs"), "\(page)")
                }
                let operatorOnly = try await browser.get("/console/admin-tokens")
                #expect(operatorOnly.status == .forbidden)
                let everyApp = try await browser.get("/console/audit/export")
                #expect(everyApp.status == .forbidden)

                let before = try await gateway.auditRows().count
                for (path, fields) in [
                    ("\(theirsPath)/settings", [("name", "Taken"), ("token_ttl_seconds", "60"), ("credential_types", "static")]),
                    ("\(theirsPath)/enabled", [("enabled", "false")]),
                    ("\(theirsPath)/keys/generate", [("bits", "2048")]),
                    ("\(theirsPath)/users", [("user_id", "eve"), ("password", "long-enough-password")]),
                    ("/console/admin-tokens", [("name", "escalate"), ("scope", "operator")]),
                    ("/console/apps", [("name", "New"), ("credential_types", "static")]),
                ] {
                    let response = try await browser.post(path, fields)
                    #expect([.notFound, .forbidden].contains(response.status), "\(path): \(response.status)")
                }
                #expect(try await gateway.auditRows().count == before, "nothing changed")
                let stored = try #require(try await gateway.memory.stores.apps.find(theirs.appID))
                #expect(stored.settings.name == "Theirs" && stored.settings.isEnabled)

                // What the API lets an app admin do, the console does: rename the own app.
                let renamed = try await browser.post(
                    "\(minePath)/settings", [("name", "Mine, renamed"), ("token_ttl_seconds", "90"), ("credential_types", "static")])
                #expect(renamed.status == .seeOther, "\(text(renamed))")
                // And what it refuses, the console refuses: an app admin may turn the app off, not on again.
                #expect(try await browser.post("\(minePath)/enabled", [("enabled", "false")]).status == .seeOther)
                let refused = try await browser.post("\(minePath)/enabled", [("enabled", "true")])
                #expect(refused.status == .forbidden)
                #expect(text(refused).contains("Enabling a disabled app needs an operator token."))
            }
        }
    }

    @Test func noSecretIsRenderedBack() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp { $0.credentialTypes = ["static", "password", "webhook"] }
            let appPath = "/console/apps/\(app.appID.uuid.lowercasedText)"
            let webhookSecret = "tenant-webhook-secret-\(UUID().lowercasedText)"
            let password = "correct-horse-\(UUID().lowercasedText)"
            let pem = try await TestKeys.opensslPEM(format: "pkcs8")
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                var pages: [TestResponse] = []

                // A plugin secret set through the webhook's options form is never shown again.
                let options = "\(appPath)/options/webhook"
                pages.append(try await browser.get(options))
                pages.append(try await browser.post(options, [("o.url", "https://users.example.com/verify"), ("o.secret", webhookSecret)]))
                #expect(pages.last?.status == .seeOther, "\(text(pages.last!))")
                let after = try await browser.get(options)
                pages.append(after)
                #expect(text(after).contains("stored: left empty, it is kept"), "\(text(after))")
                // A refused edit shows what was typed, but never a secret typed in.
                let typedSecret = "typed-secret-\(UUID().lowercasedText)"
                let refusedEdit = try await browser.post(options, [("o.url", "ftp://x"), ("o.secret", typedSecret)])
                #expect(refusedEdit.status == .badRequest, "\(text(refusedEdit))")
                #expect(text(refusedEdit).contains(#"id="opt-url-error">plugins.webhook.url"#), "\(text(refusedEdit))")
                #expect(!text(refusedEdit).contains(typedSecret))
                // The secret left empty keeps the stored one while the URL stays.
                let untouched = try await browser.post(options, [("o.url", "https://users.example.com/verify"), ("o.secret", ""), ("o.timeout_ms", "1500")])
                #expect(untouched.status == .seeOther, "\(text(untouched))")

                // A user's password, refused and accepted.
                pages.append(try await browser.post("\(appPath)/users", [("user_id", "carol"), ("password", "short")]))
                #expect(text(pages.last!).contains("password must be at least"))
                pages.append(try await browser.post("\(appPath)/users", [("user_id", "carol"), ("password", password)]))
                pages.append(try await browser.get("\(appPath)/users/carol"))
                pages.append(try await browser.post("\(appPath)/users/carol/password", [("password", password + "2")]))
                pages.append(try await browser.get("\(appPath)/users"))

                // A private key, refused (bad key id) and accepted.
                pages.append(try await browser.post("\(appPath)/keys/import", [("key_id", "not-a-key-id"), ("private_key_pem", pem)]))
                #expect(pages.last?.status == .badRequest)
                pages.append(try await browser.post("\(appPath)/keys/import", [("private_key_pem", pem)]))
                pages.append(try await browser.get("\(appPath)/keys"))

                // An admin token: on the page that creates it, and never after.
                let created = try await browser.post("/console/admin-tokens", [("name", "ci"), ("scope", "operator")])
                let secret = try #require(Self.inputValue("created-token", in: text(created)))
                #expect(secret.hasPrefix(AdminTokenSecret.prefix))
                pages.append(try await browser.get("/console/admin-tokens"))
                #expect(!text(pages.last!).contains(secret))

                pages.append(try await browser.get("\(appPath)/audit"))
                for page in pages {
                    let body = text(page)
                    for leaked in [webhookSecret, password, "BEGIN RSA PRIVATE KEY", "BEGIN PRIVATE KEY", token] {
                        #expect(!body.contains(leaked), "a page showed a secret")
                    }
                }
            }
        }
    }

    static func inputValue(_ id: String, in html: String) -> String? {
        guard let start = html.range(of: #"id="\#(id)""#),
            let value = html[start.upperBound...].range(of: #"value=""#)
        else { return nil }
        let rest = html[value.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}
