import Foundation
import GatewayConsole
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// The console's pages that read what PostgreSQL holds: the audit trail,
/// a passkey's row, the console sessions' own table (how a session is
/// stored, and its expiry). The pages' decisions are tested over memory in
/// GatewayConsoleTests.
@Suite struct ConsoleStorageTests {
    /// A user's passkeys are looked up, renamed and revoked, and the
    /// association files shown (the passkey itself is stored as a
    /// registration leaves it: the page shows what the API answers).
    @Test func passkeysAreListedRenamedAndRevoked() async throws {
        try await withConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp {
                $0.credentialTypes = ["static", "passkey"]
                $0.plugins["passkey"] = .object([
                    "rp_id": .string("example.com"), "ios_app_ids": .array([.string("ABCDE12345.com.example.chat")]),
                ])
            }
            try await gateway.client.query(
                """
                INSERT INTO passkeys (app_id, credential_id, user_id, name, public_key, algorithm, sign_count,
                                      backup_eligible, backed_up, aaguid, attestation_format)
                VALUES (\(app.appID.uuid), '\\x0102'::bytea, 'ann', 'Ann''s phone', '\\xa0'::bytea, -7, 0, true, true,
                        '00000000-0000-0000-0000-000000000000', 'none')
                """, logger: TestDatabase.logger)
            let base = "/console/apps/\(app.appID.uuid.lowercasedText)/passkeys"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                let empty = text(try await browser.get(base))
                #expect(empty.contains("ABCDE12345.com.example.chat"), "the association file is shown")
                let page = text(try await browser.get("\(base)?user_id=ann"))
                #expect(page.contains("Ann&#39;s phone") || page.contains("Ann's phone"), "\(page)")
                #expect(page.contains("synced"))
                let renamed = try await browser.post("\(base)/rename", [("user_id", "ann"), ("credential_id", "AQI"), ("name", "Work key")])
                #expect(renamed.location == "\(base)?user_id=ann&notice=renamed", "\(text(renamed))")
                #expect(text(try await browser.get("\(base)?user_id=ann")).contains("Work key"))
                let revoked = try await browser.post("\(base)/revoke", [("user_id", "ann"), ("credential_id", "AQI")])
                #expect(revoked.location == "\(base)?user_id=ann&notice=revoked")
                #expect(text(try await browser.get("\(base)?user_id=ann")).contains("This user has no passkey."))
                let missing = try await browser.post("\(base)/revoke", [("user_id", "ann"), ("credential_id", "AQI")])
                #expect(missing.status == .notFound && text(missing).contains("no passkey with that credential_id"))
            }
        }
    }

    @Test func keysAuditAndTheValidatorShowWhatTheAPISays() async throws {
        try await withConsoleGateway { gateway in
            let token = try await gateway.adminToken(.operator)
            let app = try await gateway.createApp()
            let other = try await gateway.createApp()
            let appPath = "/console/apps/\(app.appID.uuid.lowercasedText)"
            try await gateway.test { client in
                var browser = ConsoleBrowser(client)
                try await browser.signIn(token)
                // The active key cannot be deleted: the API's 409, shown on the keys page.
                let keys = try await client.admin(.get, "/admin/v1/apps/\(app.appID.uuid.lowercasedText)/keys", token: token)
                let keyID = try #require((try jsonObject(keys)["items"] as? [[String: Any]])?.first?["key_id"] as? String)
                let encoded = keyID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let refused = try await browser.post("\(appPath)/keys/\(encoded)/delete", [])
                #expect(refused.status == .conflict, "\(text(refused))")
                #expect(text(refused).contains("class=\"error\""))

                // Tokens issued and denied, for this app and another.
                let issued = try await client.postJSON(aliceRequest(app))
                var wrong = aliceRequest(app)
                wrong["credentials"] = ["type": "static", "password": "nope"]
                #expect(try await client.postJSON(wrong).status == .unauthorized)
                #expect(try await client.postJSON(aliceRequest(other)).status == .ok)

                let audit = try await browser.get("\(appPath)/audit?reason=bad_password")
                #expect(audit.status == .ok)
                #expect(text(audit).contains("<td>token.denied</td>") && !text(audit).contains("<td>token.issued</td>"))
                #expect(text(audit).contains(#"aria-label="Token requests per minute: 1 issued, 1 denied""#))
                let export = try await browser.get("\(appPath)/audit/export?event=token.issued")
                #expect(export.status == .ok)
                #expect(export.headers[.contentDisposition]?.contains("attachment") == true)
                let lines = text(export).split(separator: "\n")
                #expect(lines.count == 1 && lines[0].contains(app.appID.uuid.lowercasedText))
                let badRange = try await browser.get("\(appPath)/audit?from=yesterday")
                #expect(badRange.status == .badRequest && text(badRange).contains("from must be an RFC 3339 time"))

                // The validator: the token valid; a changed one not, with its problem named.
                let compact = try #require(identityToken(in: issued))
                let valid = try await browser.post("/console/validator", [("identity_token", compact)])
                #expect(text(valid).contains(#"<h2 id="verdict" class="valid">Valid</h2>"#))
                #expect(!text(valid).contains(compact), "the pasted token is not shown back")
                let tampered = String(compact.dropLast(4)) + "AAAA"
                let invalid = try await browser.post("/console/validator", [("identity_token", tampered)])
                #expect(text(invalid).contains("Not valid") && text(invalid).contains("bad_signature"))

                // Apps: search and paging.
                let searched = try await browser.get("/console/apps?search=\(other.appID.uuid.lowercasedText)")
                #expect(text(searched).contains(other.appID.uuid.lowercasedText) && !text(searched).contains(app.appID.uuid.lowercasedText))
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
                let doomedID = try await adminTokenID(named: "doomed", gateway)
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
}
