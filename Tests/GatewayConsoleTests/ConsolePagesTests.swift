import Crypto
import Foundation
import GatewayConsole
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// The pages' own work, each through the form a browser would post: what
/// they show after the API answered, and the API's refusal beside the form.
@Suite struct ConsolePagesTests {
    @Test func usersAreImportedWithAReportPerLine() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp { $0.credentialTypes = ["static", "password"] }
            let usersPath = "/console/apps/\(app.appID.uuid.lowercasedText)/users"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let lines = [
                    #"{"user_id":"ann","password":"ann-long-password","display_name":"Ann"}"#,
                    #"{"user_id":"ben","password":"short"}"#,
                    #"{"user_id":"cy","password_hash":"$2b$04$abcdefghijklmnopqrstuuS7x0vAsF1GkCyq/ve6ydBkmvNuSqHhO"}"#,
                ]
                let report = try await browser.post("\(usersPath)/import", [("ndjson", lines.joined(separator: "\n"))])
                #expect(report.status == .ok)
                #expect(text(report).contains("3 lines: 2 created, 0 replaced, 1 failed."), "\(text(report))")
                #expect(text(report).contains("<td>2</td><td>ben</td>"), "the bad line is named")
                #expect(!text(report).contains("ann-long-password"))
                // The API's refusal lands beside the field it names, and what was typed comes back but the password.
                let refused = try await browser.post(usersPath, [("user_id", "dot"), ("password", "short1"), ("display_name", "Dot")])
                #expect(refused.status == .badRequest)
                #expect(text(refused).contains(#"<p class="field-error">password must be at least 8 characters.</p>"#))
                #expect(text(refused).contains(#"name="password" type="password" autocomplete="new-password" required aria-invalid="true""#))
                #expect(text(refused).contains(#"value="Dot""#) && !text(refused).contains("short1"))
                let empty = try await browser.post("\(usersPath)/import", [("ndjson", "  \n")])
                #expect(empty.status == .badRequest && text(empty).contains("Choose a file or paste its lines."))

                // Search by prefix, and the user's page.
                let found = try await browser.get("\(usersPath)?prefix=a")
                #expect(text(found).contains(">ann</a>") && !text(found).contains(">cy</a>"))
                let turnedOff = try await browser.post("\(usersPath)/ann/disabled", [("disabled", "true")])
                #expect(turnedOff.location == "\(usersPath)/ann?notice=disabled")
                let login = try await client.postJSON([
                    "app_id": app.appID.uuid.lowercasedText, "user_id": "ann", "nonce": "n",
                    "credentials": ["type": "password", "password": "ann-long-password"],
                ])
                #expect(login.status == .unauthorized, "a user turned off in the console cannot log in")
                let deleted = try await browser.post("\(usersPath)/cy/delete", [])
                #expect(deleted.location == "\(usersPath)?notice=deleted")
                #expect(try await browser.get("\(usersPath)/cy").status == .notFound)
            }
        }
    }

    /// A password user's page lists their live sessions (never a token) and ends one, or all.
    @Test func aUsersPageShowsTheirSessionsAndEndsThem() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp {
                $0.credentialTypes = ["password"]
                $0.plugins = ["password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])])]
                $0.sessions = SessionSettings()
            }
            let userPath = "/console/apps/\(app.appID.uuid.lowercasedText)/users/ann"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                _ = try await browser.post("/console/apps/\(app.appID.uuid.lowercasedText)/users", [("user_id", "ann"), ("password", "ann-long-password")])
                var refreshTokens: [String] = []
                for device in ["Ann's phone", "Ann's laptop"] {
                    let login = try jsonObject(try await client.postJSON([
                        "app_id": app.appID.uuid.lowercasedText, "user_id": "ann", "nonce": "n", "device_label": device,
                        "credentials": ["type": "password", "password": "ann-long-password"],
                    ]))
                    refreshTokens.append(try #require(login["refresh_token"] as? String))
                }
                let page = text(try await browser.get(userPath))
                #expect(page.contains("Ann&#39;s phone") && page.contains("Ann&#39;s laptop"), "\(page)")
                for refreshToken in refreshTokens { #expect(!page.contains(refreshToken)) }
                let sessionID = try #require(RefreshToken(text: refreshTokens[0])?.sessionID.lowercasedText)
                let ended = try await browser.post("\(userPath)/sessions/end", [("session_id", sessionID)])
                #expect(ended.location == "\(userPath)?notice=session_ended")
                let after = text(try await browser.get(userPath))
                #expect(!after.contains("Ann&#39;s phone") && after.contains("Ann&#39;s laptop"))
                let all = try await browser.post("\(userPath)/sessions/end", [])
                #expect(all.location == "\(userPath)?notice=sessions_ended")
                #expect(text(try await browser.get(userPath)).contains("No live session"))
            }
        }
    }

    /// A password user's page shows their second factor (never its secret) and resets it.
    @Test func aUsersPageShowsTheirSecondFactorAndResetsIt() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp {
                $0.credentialTypes = ["password"]
                $0.plugins = ["password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])])]
                $0.sessions = SessionSettings()
                $0.mfa = SecondFactorSettings(requirement: .required)
            }
            let appID = app.appID.uuid.lowercasedText
            let userPath = "/console/apps/\(appID)/users/ann"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                _ = try await browser.post("/console/apps/\(appID)/users", [("user_id", "ann"), ("password", "ann-long-password")])
                #expect(text(try await browser.get(userPath)).contains("None: the user"))
                let challenge = try jsonObject(try await client.postJSON([
                    "app_id": appID, "user_id": "ann", "nonce": "n",
                    "credentials": ["type": "password", "password": "ann-long-password"],
                ]))
                let ticket = try #require(challenge["mfa_ticket"] as? String)
                let enrolled = try jsonObject(try await client.postJSON(["app_id": appID, "mfa_ticket": ticket], to: "/v1/mfa/totp"))
                let secret = try #require(enrolled["secret"] as? String)
                let page = text(try await browser.get(userPath))
                #expect(page.contains("waiting for its first code") && page.contains("10 recovery code(s) left"), "\(page)")
                #expect(!page.contains(secret))
                let reset = try await browser.post("\(userPath)/mfa/reset", [])
                #expect(reset.location == "\(userPath)?notice=mfa_reset")
                #expect(text(try await browser.get(userPath)).contains("None: the user"))
            }
        }
    }

    @Test func phoneNumbersAreBoundAndUnbound() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp {
                $0.credentialTypes = ["phone_code"]
                $0.plugins = [
                    "phone_code": .object([
                        "sender": .object(["type": .string("log")]),
                        "test_numbers": .array([.object(["phone_number": .string("+15555550100"), "code": .string("123456")])]),
                    ])
                ]
            }
            let numbersPath = "/console/apps/\(app.appID.uuid.lowercasedText)/phone-numbers"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let page = try await browser.get(numbersPath)
                #expect(page.status == .ok, "\(text(page))")
                #expect(text(page).contains("+15555550100"), "the test number is listed")
                let refused = try await browser.post(numbersPath, [("phone_number", "555-0100"), ("user_id", "dee")])
                #expect(refused.status == .badRequest)
                #expect(text(refused).contains(#"value="dee""#), "what was typed comes back")
                let bound = try await browser.post(numbersPath, [("phone_number", "+14155550123"), ("user_id", "dee")])
                #expect(bound.location == "\(numbersPath)?notice=bound", "\(text(bound))")
                #expect(text(try await browser.get(numbersPath)).contains("<code>+14155550123</code>"))
                let unbound = try await browser.post("\(numbersPath)/%2B14155550123/unbind", [])
                #expect(unbound.location == "\(numbersPath)?notice=unbound")
                #expect(!text(try await browser.get(numbersPath)).contains("<code>+14155550123</code>"))

                // An open pumping breaker is a banner with its release; released, it is gone.
                let trip = AuditEvent(appID: app.appID, event: "send_breaker.tripped", outcome: .failure, requestID: "console-trip")
                let now = Date()
                _ = try await gateway.pluginServices.sendProtection.trip(
                    "+491555", channel: "sms", in: app.appID, threshold: 50, until: now.addingTimeInterval(3600), grace: 3600, now: now,
                    recording: trip)
                let banner = text(try await browser.get(numbersPath))
                #expect(banner.contains("Codes to numbers starting +491555 are refused"), "\(banner)")
                let released = try await browser.post("\(numbersPath)/breakers/%2B491555/release", [])
                #expect(released.location == "\(numbersPath)?notice=released", "\(text(released))")
                #expect(!text(try await browser.get(numbersPath)).contains("are refused"))
            }
        }
    }

    /// Token profiles have their own page, the form their declarations
    /// render: a row per profile, each chosen by its type; a secret is never
    /// shown again and, left empty, keeps the stored one; the validator
    /// checks a token as the app's profile.
    @Test func tokenProfilesAreEditedAndTheValidatorChecksThem() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp()
            let appPath = "/console/apps/\(app.appID.uuid.lowercasedText)"
            let page = "\(appPath)/options/token_profiles"
            let secret = "console-stream-secret-0123456789"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let form = text(try await browser.get(page))
                #expect(form.contains(#"<option value="stream">stream</option>"#) && form.contains(#"name="o.token_profiles.rows""#), "\(form)")
                let refusedSecret = "typed-but-refused-secret-42"
                let refused = try await browser.post(
                    page,
                    [
                        ("o.token_profiles.rows", "2"), ("o.token_profiles.0.type", "layer"), ("o.token_profiles.1.type", "stream"),
                        ("o.token_profiles.1.stream.api_key", "k"), ("o.token_profiles.1.stream.api_secret", refusedSecret),
                        ("o.token_profiles.1.stream.lifetime_seconds", "1"),
                    ])
                #expect(refused.status == .badRequest)
                #expect(
                    text(refused).contains(#"id="opt-token_profiles-1-stream-lifetime_seconds-error">token_profiles.stream.lifetime_seconds"#),
                    "\(text(refused))")
                #expect(!text(refused).contains(refusedSecret), "a refused edit does not show the typed secret again")

                let saved = try await browser.post(
                    page,
                    [
                        ("o.token_profiles.rows", "2"), ("o.token_profiles.0.type", "layer"), ("o.token_profiles.1.type", "stream"),
                        ("o.token_profiles.1.stream.api_key", "k"), ("o.token_profiles.1.stream.api_secret", secret),
                    ])
                #expect(saved.location == "\(page)?notice=saved", "\(text(saved))")
                let shown = text(try await browser.get(page))
                #expect(shown.contains("stored: left empty, it is kept") && !shown.contains(secret), "\(shown)")
                // Saved again with the secret left empty, and a lifetime: the stored secret is kept.
                let again = try await browser.post(
                    page,
                    [
                        ("o.token_profiles.rows", "3"), ("o.token_profiles.0.type", "layer"), ("o.token_profiles.1.type", "stream"),
                        ("o.token_profiles.1.stream.api_key", "k"), ("o.token_profiles.1.stream.api_secret", ""),
                        ("o.token_profiles.1.stream.lifetime_seconds", "600"),
                    ])
                #expect(again.location == "\(page)?notice=saved", "\(text(again))")

                var request = aliceRequest(app)
                request["token_profile"] = "stream"
                let issued = try await client.postJSON(request)
                #expect(issued.status == .ok, "\(text(issued))")
                let compact = try #require(identityToken(in: issued))
                let parts = compact.split(separator: ".").map(String.init)
                let mac = HMAC<SHA256>.authenticationCode(
                    for: Array("\(parts[0]).\(parts[1])".utf8), using: SymmetricKey(data: Array(secret.utf8)))
                #expect(Base64URL.encode(Array(mac)) == parts[2], "the token is signed with the secret the empty field kept")
                let valid = try await browser.post(
                    "/console/validator",
                    [("identity_token", compact), ("app_id", app.appID.uuid.lowercasedText), ("token_profile", "stream")])
                #expect(text(valid).contains(#"<h2 id="verdict" class="valid">Valid</h2>"#), "\(text(valid))")
                let asLayer = try await browser.post("/console/validator", [("identity_token", compact)])
                #expect(text(asLayer).contains("Not valid"), "without the app, it is checked as a Layer token")
                let unknown = try await browser.post(
                    "/console/validator",
                    [("identity_token", compact), ("app_id", app.appID.uuid.lowercasedText), ("token_profile", "twilio")])
                #expect(unknown.status == .badRequest && text(unknown).contains("twilio"), "\(text(unknown))")
            }
        }
    }

    /// Self-service (like sessions and the second factor) has its own page,
    /// the form its declaration renders: the operator turns it on; an app's
    /// admin turns a flow off but cannot open sign-up further, and the
    /// refusal stands beside the field; the switch off sends `null`.
    @Test func selfServiceIsSetOnItsOwnPage() async throws {
        try await withMemoryConsoleGateway { gateway in
            let operatorToken = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp {
                $0.credentialTypes = ["password", "email_code"]
                $0.plugins = ["email_code": .object(["sender": .object(["type": .string("log")]), "from": .string("a@shop.example")])]
            }
            let appID = app.appID.uuid.lowercasedText
            let page = "/console/apps/\(appID)/options/self_service"
            @Sendable func fields(on: Bool = true, signUp: String, reset: Bool = true, lifetime: String = "900") -> [(String, String)] {
                var fields = [
                    ("o.sign_up", signUp), ("o.user_ids", "generated"), ("o.account_deletion", "true"),
                    ("o.code_ttl_seconds", lifetime), ("o.max_attempts", "5"), ("o.recent_sign_in_seconds", "600"),
                ]
                if on { fields.append(("on", "true")) }
                if reset { fields.append(("o.password_reset", "true")) }
                return fields
            }
            @Sendable func stored() async throws -> [String: Any]? {
                try jsonObject(try await gateway.admin(.get, "/admin/v1/apps/\(appID)", token: operatorToken))["self_service"]
                    as? [String: Any]
            }
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(operatorToken)
                #expect(text(try await browser.get("/console/apps/\(appID)")).contains(#"options/self_service">Self-service</a> (off)"#))
                let off = text(try await browser.get(page))
                #expect(off.contains(#"name="on" value="true">"#) && off.contains("default (closed)"), "\(off)")
                let notANumber = try await browser.post(page, fields(signUp: "open", lifetime: "soon"))
                #expect(notANumber.status == .badRequest)
                #expect(
                    text(notANumber).contains(#"id="opt-code_ttl_seconds-error">self_service.code_ttl_seconds must be a whole number from 60 to 3600."#),
                    "\(text(notANumber))")
                #expect(text(notANumber).contains(#"value="soon""#), "what was typed stays")
                let saved = try await browser.post(page, fields(signUp: "verified_email"))
                #expect(saved.location == "\(page)?notice=saved", "\(text(saved))")
                let after = try #require(try await stored())
                #expect(after["sign_up"] as? String == "verified_email" && after["password_reset"] as? Bool == true)
                #expect(after["email_change"] as? Bool == false && after["account_deletion"] as? Bool == true)
                #expect(text(try await browser.get(page)).contains(#"<option value="verified_email" selected>"#))
            }
            let appToken = try await gateway.adminToken(.app(app.appID))
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(appToken)
                let opened = try await browser.post(page, fields(signUp: "open"))
                #expect(opened.status == .forbidden, "\(text(opened))")
                #expect(text(opened).contains(#"id="opt-sign_up-error">"#) && text(opened).contains("self_service.sign_up"), "\(text(opened))")
                let tightened = try await browser.post(page, fields(signUp: "verified_email", reset: false))
                #expect(tightened.location == "\(page)?notice=saved", "\(text(tightened))")
                #expect(try await stored()?["password_reset"] as? Bool == false)
            }
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(operatorToken)
                let turnedOff = try await browser.post(page, fields(on: false, signUp: "verified_email"))
                #expect(turnedOff.location == "\(page)?notice=saved", "\(text(turnedOff))")
                #expect(try await stored() == nil, "the switch off turns self-service off")
            }
        }
    }

    @Test func appsArePagedAndAnOperatorDeletesOne() async throws {
        try await withMemoryConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            var created: [AppSettings] = []
            for index in 0..<23 { created.append(try await gateway.createApp { $0.name = "App \(index)" }) }
            let apps = created
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let first = text(try await browser.get("/console/apps"))
                let next = try #require(first.range(of: #"<a href="([^"]+)" rel="next">"#, options: .regularExpression).map {
                    String(first[$0].dropFirst(9).dropLast(13)).replacingOccurrences(of: "&amp;", with: "&")
                })
                let second = text(try await browser.get(next))
                let listed = { (page: String) in apps.filter { page.contains($0.appID.uuid.lowercasedText) }.count }
                #expect(listed(first) == 20 && listed(second) == 3, "20 a page, the rest on the next")
                #expect(!second.contains(#"rel="next""#))

                let doomed = apps[0].appID.uuid.lowercasedText
                let deleted = try await browser.post("/console/apps/\(doomed)/delete", [])
                #expect(deleted.location == "/console/apps?notice=deleted")
                #expect(try await browser.get("/console/apps/\(doomed)").status == .notFound)
                #expect(try await gateway.auditRows().contains { $0.event == "admin.app.deleted" })
            }
        }
    }
}
