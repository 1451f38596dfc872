import Foundation
import GatewayConsole
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// A channel's own pages: send protection inside the phone code form, and
/// the email tab's preview and test message.
@Suite struct ConsoleChannelPagesTests {
    /// Send protection, declared once for SMS and email, in the phone code
    /// form: the breaker turned off by its box is `false`, a country list is
    /// one of allow or deny, and the human check's secret is write-only.
    @Test func sendProtectionIsPartOfTheChannelsForm() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp {
                $0.credentialTypes = ["phone_code"]
                $0.plugins = ["phone_code": .object(["sender": .object(["type": .string("log")])])]
            }
            let page = "/console/apps/\(app.appID.uuid.lowercasedText)/options/phone_code"
            let checkSecret = "turnstile-secret-0123456789"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let form = text(try await browser.get(page))
                #expect(form.contains(#"name="o.send_protection.breaker.~off""#) && form.contains("Fill in one of allow or deny"), "\(form)")
                let both = try await browser.post(
                    page,
                    [("o.sender.type", "log"), ("o.send_protection.countries.allow", "DE"), ("o.send_protection.countries.deny", "FR")])
                #expect(both.status == .badRequest)
                #expect(text(both).contains("plugins.phone_code.send_protection.countries takes one of allow or deny."), "\(text(both))")
                let saved = try await browser.post(
                    page,
                    [
                        ("o.sender.type", "log"), ("o.send_protection.breaker.~off", "true"), ("o.send_protection.countries.allow", "DE\nFR"),
                        ("o.send_protection.human_check.provider", "turnstile"), ("o.send_protection.human_check.secret", checkSecret),
                        ("o.send_protection.human_check.hostnames", "shop.example"),
                    ])
                #expect(saved.status == .seeOther, "\(text(saved))")
                let shown = text(try await browser.get(page))
                #expect(!shown.contains(checkSecret) && shown.contains(#"name="o.send_protection.breaker.~off" value="true" checked"#), "\(shown)")
            }
            let stored = try jsonObject(try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: token))
            let protection = try #require(((stored["plugins"] as? [String: Any])?["phone_code"] as? [String: Any])?["send_protection"] as? [String: Any])
            #expect(protection["breaker"] as? Bool == false)
            #expect((protection["countries"] as? [String: Any])?["allow"] as? [String] == ["DE", "FR"])
            #expect((protection["human_check"] as? [String: Any])?["secret"] as? String == "********")
        }
    }

    /// The email tab previews the app's code email and queues a test message.
    @Test func theEmailTabPreviewsTheMessageAndSendsATest() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp {
                $0.name = "Shop & Co"
                $0.credentialTypes = ["email_code"]
                $0.plugins = ["email_code": .object(["sender": .object(["type": .string("log")]), "from": .string("codes@shop.example")])]
            }
            let page = "/console/apps/\(app.appID.uuid.lowercasedText)/email"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let tab = text(try await browser.get(page))
                #expect(tab.contains("Send a test message") && tab.contains(#"href="\#(page)""#), "\(tab)")
                let preview = text(try await browser.post("\(page)/preview", [("locale", "de")]))
                #expect(preview.contains("123456") && preview.contains("Shop &amp; Co"), "\(preview)")
                #expect(preview.contains(#"<pre id="preview-html">"#) && !preview.contains("<p>Ihr"), "the HTML is shown as its source")
                let unknown = try await browser.post("\(page)/preview", [("locale", "xx")])
                #expect(unknown.status == .badRequest && text(unknown).contains(#"id="locale-error" class="field-error">locale: this app has no template for &#39;xx&#39;"#), "\(text(unknown))")
                let bad = try await browser.post("\(page)/test", [("to", "nobody")])
                #expect(bad.status == .badRequest && text(bad).contains(#"id="to-error""#), "\(text(bad))")
                let queued = try await browser.post("\(page)/test", [("to", "ops@shop.example")])
                #expect(queued.location == "\(page)?notice=queued", "\(text(queued))")
            }
        }
    }
}
