import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// A self-service account's own flows (recovery, a new password or
/// address, deletion) end to end against PostgreSQL, their mail carried by
/// a real SMTP server (aiosmtpd) and parsed by Python's `email` package.
@Suite struct SelfServiceAccountTests: ConcurrentAttack {
    static let password = SelfServiceTests.password

    /// One recovery code, sent by many requests at once through two
    /// replicas: one sets a password; an older code is dead once a newer is
    /// sent; a code dies after its tries; a new password or a disabled user
    /// ends the one still live.
    @Test func aRecoveryCodeIsSingleUseLatestOnlyAndDiesWithItsTriesAndTheUsersChanges() async throws {
        try await SMTPSink.with { sink in
            try await withTwoInstances(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) {
                gateways in
                let gateway = gateways[0]
                let app = try await gateway.createSelfServiceApp(sink, attempts: 3)
                let token = try await gateway.operatorToken()
                let made = try await gateway.admin(
                    .put, "/admin/v1/apps/\(app.appID)/users/lin", token: token,
                    json: ["password": Self.password, "email": "lin@example.com"])
                #expect(made.status == .created)
                var mails = 0
                func recoveryCode() async throws -> String {
                    try await gateway.ageAccountCodes(app)
                    #expect(try await gateway.account("password_reset", app, ["email": "lin@example.com"]).status == .accepted)
                    mails += 1
                    return try await sink.code(to: "lin@example.com", subject: "Your Shop password reset code", count: mails)
                }
                func reset(_ code: String, on gateway: TestGateway = gateways[0], to password: String = "a new long password")
                    async throws -> HTTPResponse.Status
                {
                    try await gateway.account(
                        "password_reset/confirm", app, ["email": "lin@example.com", "code": code, "new_password": password]
                    ).status
                }

                let first = try await recoveryCode()
                let statuses = try await statuses(on: gateways, paths: ["/v1/accounts/password_reset/confirm"]) { index in
                    ["app_id": app.appID.uuid.uuidString, "email": "lin@example.com", "code": first, "new_password": "password number \(index)"]
                }
                #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
                #expect(statuses.allSatisfy { $0 == 200 || $0 == 401 }, "\(statuses)")

                let older = try await recoveryCode()
                let newer = try await recoveryCode()
                #expect(try await reset(older) == .unauthorized, "an older code is dead once a newer one is sent")
                #expect(try await reset(newer, on: gateways[1]) == .ok)

                let tried = try await recoveryCode()
                for _ in 0..<3 { #expect(try await reset(tried == "111111" ? "222222" : "111111") == .unauthorized) }
                #expect(try await reset(tried) == .unauthorized, "a code is dead after its tries")

                let beforePassword = try await recoveryCode()
                let patched = try await gateway.admin(
                    .patch, "/admin/v1/apps/\(app.appID)/users/lin", token: token, json: ["password": "an admin's new password"])
                #expect(patched.status == .ok)
                #expect(try await reset(beforePassword) == .unauthorized, "a new password ends the code")

                let beforeDisabling = try await recoveryCode()
                #expect(try await gateway.admin(.patch, "/admin/v1/apps/\(app.appID)/users/lin", token: token, json: ["disabled": true]).status == .ok)
                #expect(try await reset(beforeDisabling) == .unauthorized, "disabling ends the code")
                #expect(try await gateway.admin(.patch, "/admin/v1/apps/\(app.appID)/users/lin", token: token, json: ["disabled": false]).status == .ok)
                #expect(try await reset(beforeDisabling) == .unauthorized, "and it stays dead")
            }
        }
    }

    /// After a recovery every refresh token of the user is refused; after a
    /// password change every one but the session's that made it.
    @Test func aRecoveryEndsEverySessionAndAPasswordChangeEveryOtherOne() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink, signUp: .open)
                #expect(try await gateway.account("sign_up", app, ["email": "ken@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "ken@example.com", in: app))
                var sessions: [String] = []
                for _ in 0..<3 {
                    let signedIn = try await gateway.passwordSignIn(app, userID, Self.password)
                    sessions.append(try #require(signedIn.refreshToken, "\(signedIn.body)"))
                }
                let changed = try await gateway.account(
                    "password", app, ["refresh_token": sessions[0], "current_password": Self.password, "new_password": "second password here"])
                #expect(changed.status == .ok, "\(text(changed))")
                #expect(try jsonObject(changed)["sessions_ended"] as? Int == 2)
                #expect(try await gateway.refresh(app, sessions[1]).status == .unauthorized)
                #expect(try await gateway.refresh(app, sessions[2]).status == .unauthorized)
                let kept = try await gateway.refresh(app, sessions[0])
                #expect(kept.status == .ok, "the session that changed the password stays: \(kept.body)")
                let wrongCurrent = try await gateway.account(
                    "password", app, ["refresh_token": try #require(kept.refreshToken), "current_password": "not it", "new_password": "third password here"])
                #expect(wrongCurrent.status == .unauthorized)

                let again = try await gateway.passwordSignIn(app, userID, "second password here")
                #expect(again.status == .ok)
                #expect(try await gateway.account("password_reset", app, ["email": "ken@example.com"]).status == .accepted)
                let code = try await sink.code(to: "ken@example.com", subject: "Your Shop password reset code", count: 2)
                let recovered = try await gateway.account(
                    "password_reset/confirm", app, ["email": "ken@example.com", "code": code, "new_password": "recovered password"])
                #expect(recovered.status == .ok, "\(text(recovered))")
                for token in [kept.refreshToken, again.refreshToken] {
                    #expect(try await gateway.refresh(app, token).status == .unauthorized, "a session outlived a recovery")
                }
                #expect(try await gateway.passwordSignIn(app, userID, "second password here").status == .unauthorized)
                #expect(try await gateway.passwordSignIn(app, userID, "recovered password").status == .ok)
            }
        }
    }

    /// Email access alone does not recover an account with a second factor:
    /// the code is kept while the factor is asked for, and spent only with it.
    @Test func aUserWithASecondFactorCannotRecoverWithEmailAlone() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink, signUp: .open)
                #expect(try await gateway.account("sign_up", app, ["email": "mae@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "mae@example.com", in: app))
                let session = try #require(try await gateway.passwordSignIn(app, userID, Self.password).refreshToken)
                let enrolled = try await gateway.test {
                    try await $0.postJSON(["app_id": app.appID.uuid.uuidString, "refresh_token": session], to: "/v1/mfa/totp")
                }
                #expect(enrolled.status == .created, "\(text(enrolled))")
                let secretText = try #require(try jsonObject(enrolled)["secret"] as? String)
                let secret = try #require(TOTPSecret(bytes: base32Decoded(secretText)))
                let recoveryCodes = try #require(try jsonObject(enrolled)["recovery_codes"] as? [String])
                let confirm = TOTP.code(secret, step: TOTP.step(at: Date()))
                let confirmed = try await gateway.test {
                    try await $0.postJSON(
                        ["app_id": app.appID.uuid.uuidString, "refresh_token": session, "code": confirm], to: "/v1/mfa/totp/confirm")
                }
                #expect(confirmed.status == .noContent, "\(text(confirmed))")

                #expect(try await gateway.account("password_reset", app, ["email": "mae@example.com"]).status == .accepted)
                let code = try await sink.code(to: "mae@example.com", subject: "Your Shop password reset code", count: 2)
                func reset(_ secondFactor: [String: String]?) async throws -> TestResponse {
                    var body: [String: any Sendable] = ["email": "mae@example.com", "code": code, "new_password": "taken over password"]
                    body["second_factor"] = secondFactor
                    return try await gateway.account("password_reset/confirm", app, body)
                }
                let alone = try await reset(nil)
                let aloneError = try jsonObject(alone)["error"] as? String
                #expect(alone.status == .forbidden && aloneError == "mfa_required", "\(text(alone))")
                let wrong = try await reset(["type": "recovery_code", "code": "not-a-code"])
                #expect(wrong.status == .unauthorized)
                #expect(try await gateway.passwordSignIn(app, userID, "taken over password").status == .unauthorized)
                let both = try await reset(["type": "recovery_code", "code": recoveryCodes[0]])
                #expect(both.status == .ok, "the code stayed live while the factor was asked: \(text(both))")
                #expect(try await reset(["type": "recovery_code", "code": recoveryCodes[1]]).status == .unauthorized, "and is spent now")
            }
        }
    }

    /// A user deletes their own account: nothing of it is left in any table
    /// that keeps a user (but the audit trail, and sessions and messages
    /// ended, as the admin API's deletion leaves them), and the address signs
    /// up again as a new user who inherits nothing.
    @Test func aUserDeletesTheirAccountAndTheAddressSignsUpAnewWithNothingInherited() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink, signUp: .open)
                #expect(try await gateway.account("sign_up", app, ["email": "ola@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "ola@example.com", in: app))
                let signedIn = try await gateway.passwordSignIn(app, userID, Self.password)
                let session = try #require(signedIn.refreshToken)
                let enrolled = try await gateway.test {
                    try await $0.postJSON(["app_id": app.appID.uuid.uuidString, "refresh_token": session], to: "/v1/mfa/totp")
                }
                #expect(enrolled.status == .created)
                try await gateway.ageAccountCodes(app)
                #expect(try await gateway.account("password_reset", app, ["email": "ola@example.com"]).status == .accepted)

                let old = try await gateway.passwordSignIn(app, userID, Self.password)
                let oldSession = try #require(old.sessionID.flatMap(UUID.init(uuidString:)))
                try await gateway.client.query(
                    "UPDATE sessions SET auth_time = auth_time - interval '1 hour' WHERE session_id = \(oldSession)",
                    logger: TestDatabase.logger)
                let stale = try await gateway.account("deletion", app, ["refresh_token": try #require(old.refreshToken)])
                let staleError = try jsonObject(stale)["error"] as? String
                #expect(stale.status == .forbidden && staleError == "recent_sign_in_required")
                let wrongPassword = try await gateway.account(
                    "deletion", app, ["refresh_token": try #require(old.refreshToken), "password": "not the password"])
                #expect(wrongPassword.status == .unauthorized, "an old session with a wrong password deletes nothing")
                let deleted = try await gateway.account("deletion", app, ["refresh_token": session])
                #expect(deleted.status == .ok, "\(text(deleted))")

                let leftovers = try await Self.holdings(of: userID, in: app, gateway)
                #expect(leftovers.isEmpty, "\(leftovers)")
                #expect(try await gateway.refresh(app, session).status == .unauthorized)
                let row = try await gateway.auditRows().first { $0.event == "account.deleted" && $0.reason == nil }
                #expect(row?.userID == userID)

                #expect(try await gateway.account("sign_up", app, ["email": "ola@example.com", "password": "another password"]).status == .accepted)
                let newID = try #require(try await gateway.userID(ofEmail: "ola@example.com", in: app))
                #expect(newID != userID)
                let fresh = try await gateway.passwordSignIn(app, newID, "another password")
                #expect(fresh.status == .ok, "no second factor inherited: \(fresh.body)")
            }
        }
    }

    /// Rows of `userID` still live in any table with a `user_id` column:
    /// the audit trail is kept on purpose, ended sessions and finished
    /// messages stay (without payload) until maintenance deletes them.
    static func holdings(of userID: String, in app: AppSettings, _ gateway: TestGateway) async throws -> [String] {
        let tables = try await gateway.client.query(
            """
            SELECT table_name FROM information_schema.columns
            WHERE column_name = 'user_id' AND table_schema = 'public' AND table_name NOT LIKE 'audit_events%'
            ORDER BY table_name
            """, logger: TestDatabase.logger)
        var names: [String] = []
        for try await name in tables.decode(String.self) { names.append(name) }
        #expect(names.contains("password_users") && names.contains("second_factors") && names.contains("sessions"), "\(names)")
        var found: [String] = []
        for table in names {
            let condition =
                switch table {
                case "sessions": "AND revoked_at IS NULL"
                case "outbox": "AND (state = 'queued' OR payload IS NOT NULL)"
                default: ""
                }
            let rows = try await gateway.client.query(
                PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table) WHERE user_id = $1 \(condition)", binds: {
                    var binds = PostgresBindings()
                    binds.append(userID)
                    return binds
                }()), logger: TestDatabase.logger)
            for try await count in rows.decode(Int.self) where count > 0 { found.append("\(table): \(count)") }
        }
        let codes = try await gateway.client.query(
            "SELECT count(*)::int FROM account_codes WHERE app_id = \(app.appID.uuid) AND subject LIKE \("%:" + userID)",
            logger: TestDatabase.logger)
        for try await count in codes.decode(Int.self) where count > 0 { found.append("account_codes: \(count)") }
        return found
    }

    /// A new address: a code to it and a notice to the old one; the old
    /// address stays until the code comes back, and only for that address.
    @Test func anAddressChangesOnlyWithTheCodeSentToTheNewAddress() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink, signUp: .open)
                #expect(try await gateway.account("sign_up", app, ["email": "ivy@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "ivy@example.com", in: app))
                let session = try #require(try await gateway.passwordSignIn(app, userID, Self.password).refreshToken)
                let asked = try await gateway.account("email", app, ["refresh_token": session, "new_email": "ivy@new.example"])
                #expect(asked.status == .accepted, "\(text(asked))")
                let code = try await sink.code(to: "ivy@new.example", subject: "Confirm your new Shop address", count: 3)
                let notice = try await sink.messages(atLeast: 3).filter {
                    ($0["rcpt_tos"] as? [String]) == ["ivy@example.com"] && ($0["subject"] as? String)?.contains("about to change") == true
                }
                #expect(notice.count == 1)
                #expect(try await gateway.userID(ofEmail: "ivy@example.com", in: app) == userID, "the old address stays meanwhile")
                let elsewhere = try await gateway.account(
                    "email/confirm", app, ["refresh_token": session, "new_email": "other@new.example", "code": code])
                #expect(elsewhere.status == .unauthorized, "a code confirms only the address it went to")
                let confirmed = try await gateway.account(
                    "email/confirm", app, ["refresh_token": session, "new_email": "ivy@new.example", "code": code])
                #expect(confirmed.status == .ok, "\(text(confirmed))")
                #expect(try await gateway.userID(ofEmail: "ivy@new.example", in: app) == userID)
                #expect(try await gateway.userID(ofEmail: "ivy@example.com", in: app) == nil)
            }
        }
    }
}
