import Foundation
import GatewayConsole
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// A plugin's declared options (``OptionSchema``) reach the API, the OpenAPI
/// text and the console with no other code: a made-up plugin declares an
/// option, and the API checks it, its JSON Schema carries it, and the
/// console renders and saves it. Secrets stay write-only and are kept only
/// while they go where they went; an operator-only option is read-only for
/// an app's admin, whatever the form's HTML says.
@Suite struct ConsoleOptionFormTests {
    @Test func aDeclaredOptionReachesTheAPITheDocumentAndTheForm() async throws {
        #expect(DeclaredPlugin.schema.jsonSchema["properties"]?["level"]?["maximum"] == .number(5))
        try await Self.withGateway { gateway in
            let token = try await gateway.operatorToken()
            let appID = try await gateway.createApp(
                token: token, credentialTypes: ["declared"], plugins: ["declared": ["endpoint": "https://a.example", "key": Self.key]])
            let refused = try await gateway.send(
                .patch, "/admin/v1/apps/\(appID)", token: token,
                json: ["plugins": ["declared": ["endpoint": "https://a.example", "key": Self.key, "level": 9] as [String: any Sendable]]])
            #expect(refused.status == .badRequest)
            #expect(refused.body["message"] as? String == "plugins.declared.level must be a whole number from 1 to 5.")

            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let page = text(try await browser.get("/console/apps/\(appID)/options/declared"))
                #expect(page.contains(#"name="o.level""#) && page.contains("(1 to 5)"), "the option is a field with its bounds")
                #expect(page.contains(#"<option value="fast">"#), "a choice is a select")
                #expect(!page.contains(Self.key), "a secret is never shown")
                let saved = try await browser.post(
                    "/console/apps/\(appID)/options/declared",
                    [
                        ("o.endpoint", "https://a.example"), ("o.key", ""), ("o.level", "3"), ("o.mode", "fast"), ("o.labels.rows", "1"),
                        ("o.labels.0.~name", "team"), ("o.labels.0.value", "blue"),
                    ])
                #expect(saved.status == .seeOther, "\(text(saved))")
            }
            let stored = try await gateway.send(.get, "/admin/v1/apps/\(appID)", token: token)
            let options = try #require((stored.body["plugins"] as? [String: Any])?["declared"] as? [String: Any])
            #expect(options["level"] as? Int == 3 && options["mode"] as? String == "fast")
            #expect(options["labels"] as? [String: String] == ["team": "blue"], "a map's row: its name, then its value")
            #expect(options["key"] as? String == RedactedSecret.marker)
            #expect(try await Self.signIn(gateway, appID: appID, key: Self.key) == .ok, "the key left empty was kept")
        }
    }

    @Test func aKeptSecretNeverGoesSomewhereNew() async throws {
        try await Self.withGateway { gateway in
            let token = try await gateway.operatorToken()
            let appID = try await gateway.createApp(
                token: token, credentialTypes: ["declared"], plugins: ["declared": ["endpoint": "https://a.example", "key": Self.key]])
            // Over the API: the marker keeps the key while the endpoint stays, and is refused once it moves.
            let kept = try await gateway.send(
                .patch, "/admin/v1/apps/\(appID)", token: token,
                json: ["plugins": ["declared": ["endpoint": "https://a.example", "key": RedactedSecret.marker, "level": 2] as [String: any Sendable]]])
            #expect(kept.status == .ok, "\(kept.body)")
            #expect(try await Self.signIn(gateway, appID: appID, key: Self.key) == .ok)
            let moved = try await gateway.send(
                .patch, "/admin/v1/apps/\(appID)", token: token,
                json: ["plugins": ["declared": ["endpoint": "https://b.example", "key": RedactedSecret.marker]] as [String: any Sendable]])
            #expect(moved.status == .badRequest)
            #expect((moved.body["message"] as? String)?.hasPrefix("plugins.declared.key must be the secret itself") == true)

            // In the form: the refusal stands beside the key's field, and what was typed stays.
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let refused = try await browser.post(
                    "/console/apps/\(appID)/options/declared",
                    [("o.endpoint", "https://b.example"), ("o.key", ""), ("o.level", "4")])
                #expect(refused.status == .badRequest)
                let page = text(refused)
                #expect(page.contains(#"<p class="field-error" id="opt-key-error">plugins.declared.key must be the secret itself"#))
                #expect(page.contains(#"value="https://b.example""#) && page.contains(#"value="4""#), "the typed values stay")
                let wrong = text(
                    try await browser.post(
                        "/console/apps/\(appID)/options/declared",
                        [("o.endpoint", "https://a.example"), ("o.key", ""), ("o.level", "nine")]))
                #expect(wrong.contains(#"id="opt-level-error">plugins.declared.level must be a whole number from 1 to 5."#))
                #expect(wrong.contains(#"value="nine""#))
            }
            #expect(try await Self.signIn(gateway, appID: appID, key: Self.key) == .ok, "nothing changed")
        }
    }

    @Test func anOperatorOnlyOptionIsReadOnlyForAnAppsAdmin() async throws {
        try await Self.withGateway { gateway in
            let token = try await gateway.operatorToken()
            let appID = try await gateway.createApp(
                token: token, credentialTypes: ["declared"],
                plugins: ["declared": ["endpoint": "https://a.example", "key": Self.key, "region": "eu"]])
            let scope = try #require(AppID(appID))
            let appAdmin = try await gateway.adminToken(.app(scope), expiresAt: nil, revoked: false, name: "app admin")
            let direct = try await gateway.send(
                .patch, "/admin/v1/apps/\(appID)", token: appAdmin,
                json: ["plugins": ["declared": ["endpoint": "https://a.example", "key": RedactedSecret.marker, "region": "us"]]])
            #expect(direct.status == .forbidden)
            #expect(direct.body["message"] as? String == "Changing plugins.declared.region needs an operator token.")

            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(appAdmin)
                let page = text(try await browser.get("/console/apps/\(appID)/options/declared"))
                #expect(page.contains(#"name="o.region" value="eu" placeholder="" readonly"#), "\(page)")
                // The form's HTML edited: the stored region is what is sent.
                let saved = try await browser.post(
                    "/console/apps/\(appID)/options/declared",
                    [("o.endpoint", "https://a.example"), ("o.key", ""), ("o.region", "us"), ("o.level", "2")])
                #expect(saved.status == .seeOther, "\(text(saved))")
            }
            let stored = try await gateway.send(.get, "/admin/v1/apps/\(appID)", token: token)
            let options = try #require((stored.body["plugins"] as? [String: Any])?["declared"] as? [String: Any])
            #expect(options["region"] as? String == "eu" && options["level"] as? Int == 2)
        }
    }

    /// Rate limits are rows by policy, each a limit and a period; the API
    /// names a wrong number beside its field, and an unknown policy at the top.
    @Test func rateLimitsAreRowsByPolicy() async throws {
        try await Self.withGateway { gateway in
            let token = try await gateway.operatorToken()
            let appID = try await gateway.createApp(
                token: token, credentialTypes: ["declared"], plugins: ["declared": ["endpoint": "https://a.example", "key": Self.key]])
            let page = "/console/apps/\(appID)/options/rate_limits"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let form = text(try await browser.get(page))
                #expect(form.contains(#"name="o.rate_limits.0.~name""#) && form.contains("Policy (required)"), "\(form)")
                let wrong = try await browser.post(
                    page, [("o.rate_limits.rows", "1"), ("o.rate_limits.0.~name", "ip"), ("o.rate_limits.0.limit", "0"), ("o.rate_limits.0.period_seconds", "60")])
                #expect(wrong.status == .badRequest)
                #expect(text(wrong).contains(#"id="opt-rate_limits-0-limit-error">rate_limits.ip.limit must be a whole number from 1 to 1000000."#), "\(text(wrong))")
                let unknown = try await browser.post(
                    page, [("o.rate_limits.rows", "1"), ("o.rate_limits.0.~name", "nope"), ("o.rate_limits.0.limit", "5"), ("o.rate_limits.0.period_seconds", "60")])
                #expect(unknown.status == .badRequest && text(unknown).contains("rate_limits.nope is not a rate-limit policy"), "\(text(unknown))")
                let saved = try await browser.post(
                    page, [("o.rate_limits.rows", "1"), ("o.rate_limits.0.~name", "ip"), ("o.rate_limits.0.limit", "5"), ("o.rate_limits.0.period_seconds", "60")])
                #expect(saved.status == .seeOther, "\(text(saved))")
                let stored = try await gateway.send(.get, "/admin/v1/apps/\(appID)", token: token)
                #expect(((stored.body["rate_limits"] as? [String: Any])?["ip"] as? [String: Any])?["limit"] as? Int == 5, "\(stored.body)")
                // The row removed: the policy keeps the deployment's numbers again.
                let removed = try await browser.post(
                    page, [("o.rate_limits.rows", "2"), ("o.rate_limits.0.~name", "ip"), ("o.rate_limits.0.limit", "5"), ("o.rate_limits.0.period_seconds", "60"), ("o.rate_limits.0.remove", "true")])
                #expect(removed.status == .seeOther, "\(text(removed))")
                let after = try await gateway.send(.get, "/admin/v1/apps/\(appID)", token: token)
                #expect((after.body["rate_limits"] as? [String: Any])?.isEmpty == true, "\(after.body)")
            }
        }
    }

    static let key = "a-key-long-enough-to-take"

    static func withGateway(_ body: @Sendable (MemoryGateway) async throws -> Void) async throws {
        let registry = PluginRegistry([DeclaredPlugin()])
        try await MemoryGateway.with(
            plugins: registry,
            frontEnds: { stores, masterKey in
                [try Console(settings: ConsoleSettings(), sessions: stores.consoleSessions, masterKey: masterKey, plugins: registry)]
            }, body)
    }

    /// A token request whose credential is `key`: 200 when the stored key is it.
    static func signIn(_ gateway: MemoryGateway, appID: String, key: String) async throws -> HTTPResponse.Status {
        let token = try await gateway.operatorToken()
        _ = try await gateway.send(.post, "/admin/v1/apps/\(appID)/keys", token: token, json: ["generate": [:] as [String: Int]])
        return try await gateway.send(
            .post, "/v1/identity_tokens",
            json: ["app_id": appID, "user_id": "u", "nonce": "n", "credentials": ["type": "declared", "key": key]]
        ).status
    }
}

/// A plugin that is only its declaration: what it takes, it takes because
/// the declaration says so; its verifier compares the stored key.
private struct DeclaredPlugin: CredentialPlugin {
    let credentialType = "declared"

    static func make(_ setup: PluginSetup) -> DeclaredPlugin? { DeclaredPlugin() }

    static let schema = OptionSchema(
        name: "DeclaredOptions",
        fields: [
            OptionField("endpoint", .url, required: true, destination: true),
            OptionField("key", .secret(16...64), required: true),
            OptionField("level", .integer(1...5, default: 1)),
            OptionField("mode", .choice(["fast", "careful"])),
            OptionField("region", .text(maximumLength: 8), operatorOnly: true),
            OptionField("labels", .map(of: .text(maximumLength: 32), count: 0...4, key: "label")),
        ])

    var optionSchema: OptionSchema? { Self.schema }

    func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        KeyVerifier(key: options["key"]?.stringValue ?? "")
    }
}

private struct KeyVerifier: CredentialVerifier {
    let key: String

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        attempt.credentials.fields["key"] == key ? .verified(VerifiedIdentity(userID: attempt.userID ?? "u")) : .rejected(reason: "bad_key")
    }
}
