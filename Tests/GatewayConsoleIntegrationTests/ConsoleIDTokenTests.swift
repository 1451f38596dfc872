import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// An app's identity providers are edited in the console's id_token
/// options form (a row per provider), through the admin API's own checks.
@Suite struct ConsoleIDTokenTests {
    @Test func theOptionsFormEditsAnAppsIdentityProviders() async throws {
        try await withConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp { $0.credentialTypes = ["static"] }
            let appPath = "/console/apps/\(app.appID.uuid.lowercasedText)"
            let options = "\(appPath)/options/id_token"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                #expect(text(try await browser.get(appPath)).contains(#"options/id_token">id_token options</a>"#), "the app page links the form")
                let form = text(try await browser.get(options))
                #expect(form.contains(#"name="o.providers.0.name""#) && form.contains(#"<option value="apple">"#), "\(form)")

                let noAudience = try await browser.post(
                    options, [("o.providers.rows", "1"), ("o.providers.0.name", "apple"), ("o.providers.0.preset", "apple")])
                #expect(noAudience.status == .badRequest, "\(text(noAudience))")
                #expect(
                    text(noAudience).contains(#"id="opt-providers-0-audiences-error">plugins.id_token.providers[0].audiences"#),
                    "\(text(noAudience))")

                let saved = try await browser.post(
                    options,
                    [
                        ("o.providers.rows", "2"), ("o.providers.0.name", "apple"), ("o.providers.0.preset", "apple"),
                        ("o.providers.0.audiences", "com.example.app\ncom.example.web"), ("o.providers.1.name", "google"),
                        ("o.providers.1.preset", "google"), ("o.providers.1.audiences", "1234.apps.googleusercontent.com"),
                        ("o.providers.1.profile", "true"),
                    ])
                #expect(saved.status == .seeOther, "\(text(saved))")
                let read = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: token)
                let settings = try jsonObject(read)
                #expect(settings["credential_types"] as? [String] == ["static", "id_token"], "saving the options adds the type")
                let plugins = try #require(settings["plugins"] as? [String: Any])
                let stored = try #require((plugins["id_token"] as? [String: Any])?["providers"] as? [[String: Any]])
                #expect(stored.map { $0["name"] as? String } == ["apple", "google"])
                #expect(stored.first?["audiences"] as? [String] == ["com.example.app", "com.example.web"])
                #expect(stored.last?["profile"] as? Bool == true)
                // The form shows them back for the next edit.
                #expect(text(try await browser.get(options)).contains("1234.apps.googleusercontent.com"))
            }
        }
    }
}
