import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// An app's identity providers are edited in the console's settings form,
/// through the admin API's own checks.
@Suite struct ConsoleIDTokenTests {
    @Test func theSettingsFormEditsAnAppsIdentityProviders() async throws {
        try await withConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp { $0.credentialTypes = ["static"] }
            let appPath = "/console/apps/\(app.appID.uuid.lowercasedText)"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let form = try await browser.get(appPath)
                #expect(text(form).contains(#"value="id_token""#), "the form offers the credential type")

                func save(_ plugins: String) async throws -> TestResponse {
                    try await browser.post(
                        "\(appPath)/settings",
                        [("name", "App"), ("token_ttl_seconds", "120"), ("credential_types", "id_token"),
                         ("plugins", plugins), ("rate_limits", "{}")])
                }
                let noAudience = try await save(#"{"id_token":{"providers":[{"name":"apple","preset":"apple","audiences":[]}]}}"#)
                #expect(noAudience.status == .badRequest, "\(text(noAudience))")
                #expect(text(noAudience).contains(#"<p class="field-error">plugins.id_token.providers[0].audiences"#), "\(text(noAudience))")

                let providers = #"{"id_token":{"providers":[{"name":"apple","preset":"apple","audiences":["com.example.app","com.example.web"]},{"name":"google","preset":"google","audiences":["1234.apps.googleusercontent.com"],"profile":true}]}}"#
                let saved = try await save(providers)
                #expect(saved.status == .seeOther, "\(text(saved))")
                let read = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: token)
                let settings = try jsonObject(read)
                #expect(settings["credential_types"] as? [String] == ["id_token"])
                let plugins = try #require(settings["plugins"] as? [String: Any])
                let stored = try #require((plugins["id_token"] as? [String: Any])?["providers"] as? [[String: Any]])
                #expect(stored.map { $0["name"] as? String } == ["apple", "google"])
                #expect(stored.first?["audiences"] as? [String] == ["com.example.app", "com.example.web"])
                // The form shows them back for the next edit.
                #expect(text(try await browser.get(appPath)).contains("1234.apps.googleusercontent.com"))
            }
        }
    }
}
