import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// Self-service accounts end to end against PostgreSQL, their mail carried
/// by a real SMTP server (aiosmtpd) and parsed by Python's `email` package.
@Suite struct SelfServiceTests: ConcurrentAttack {
    static let password = "correct horse battery"

    @Test func aSignUpVerifiesItsAddressBeforeItSignsInAndItsTokenSaysSo() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink)
                let signedUp = try await gateway.account(
                    "sign_up", app, ["email": "Grace@Example.com", "password": Self.password, "first_name": "Grace"])
                #expect(signedUp.status == .accepted, "\(text(signedUp))")
                #expect(try jsonObject(signedUp)["expires_in"] as? Int == 900)
                let userID = try #require(try await gateway.userID(ofEmail: "grace@example.com", in: app))
                #expect(UUID(uuidString: userID) != nil, "a generated id: \(userID)")

                // verified_email: the right password is answered 403 until the address is proven.
                let early = try await gateway.passwordSignIn(app, userID, Self.password)
                #expect(early.status == .forbidden && early.error == "email_unverified", "\(early.body)")
                let code = try await sink.code(to: "grace@example.com", subject: "Confirm your Shop address", count: 1)
                let wrong = try await gateway.account("verification/confirm", app, ["email": "grace@example.com", "code": "000000"])
                #expect(wrong.status == .unauthorized)
                let verified = try await gateway.account("verification/confirm", app, ["email": "GRACE@example.com", "code": code])
                #expect(verified.status == .ok, "\(text(verified))")
                #expect(try jsonObject(verified)["user_id"] as? String == userID, "the code's owner learns the id to sign in with")
                #expect(try await gateway.account("verification/confirm", app, ["email": "grace@example.com", "code": code]).status
                    == .unauthorized, "a verification code is single use")

                let signedIn = try await gateway.passwordSignIn(app, userID, Self.password)
                #expect(signedIn.status == .ok, "\(signedIn.body)")
                #expect(signedIn.claims["prn"] as? String == userID)
                let user = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users/\(userID)", token: try await gateway.operatorToken())
                #expect(try jsonObject(user)["email_verified"] as? Bool == true)
                #expect(try jsonObject(user)["first_name"] as? String == "Grace")
                let events = try await gateway.auditRows().map(\.event)
                #expect(events.contains("account.created") && events.contains("account.email_verified"), "\(events)")
            }
        }
    }

    /// Sign-up, a new verification code and recovery, each asked for a
    /// registered and an unregistered address in turn: the status, the body,
    /// the headers (but the request's own id and the limits' running counts)
    /// and the time are the same. The owner of the registered address is
    /// told of the sign-up instead.
    @Test func noRouteTellsARegisteredAddressFromANewOne() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink)
                let token = try await gateway.operatorToken()
                let rounds = 24
                for index in 0..<rounds {
                    let made = try await gateway.admin(
                        .put, "/admin/v1/apps/\(app.appID)/users/known-\(index)", token: token,
                        json: ["password": Self.password, "email": "known-\(index)@example.com"])
                    #expect(made.status == .created)
                }
                for route in ["sign_up", "verification", "password_reset"] {
                    // Each registered address's time beside the next new address's: a pair asked one after the
                    // other, so a loaded host slows both, and the median of the pairs' differences is the route's.
                    var pairs: [(known: Duration, unknown: Duration)] = []
                    var knownTime = Duration.zero
                    var shapes: [Bool: Set<String>] = [:]
                    for index in 0..<rounds * 2 {
                        let known = index % 2 == 0
                        let address = known ? "known-\(index / 2)@example.com" : "\(route)-new-\(index / 2)@example.com"
                        var body: [String: any Sendable] = ["email": address]
                        if route == "sign_up" { body["password"] = Self.password }
                        let sent = body
                        let clock = ContinuousClock()
                        var answer: TestResponse?
                        let took = try await clock.measure { answer = try await gateway.account(route, app, sent) }
                        let response = try #require(answer)
                        // The first few warm the statements and the caches; the rest are measured.
                        if known { knownTime = took } else if index >= 4 { pairs.append((knownTime, took)) }
                        // The same request again at once: a second answer must not tell them apart either
                        // (a resend delay kept per account once answered a registered address's second 429).
                        let again = try await gateway.account(route, app, sent)
                        shapes[known, default: []].insert(Self.shape(of: response) + " then " + Self.shape(of: again))
                    }
                    #expect(shapes[true] == shapes[false], "\(route): \(shapes)")
                    #expect(shapes[true]?.count == 1, "\(route): \(shapes[true] ?? [])")
                    let gap = abs(median(pairs.map { $0.known - $0.unknown }).seconds)
                    let typical = median(pairs.flatMap { [$0.known, $0.unknown] }).seconds
                    #expect(
                        gap <= max(0.005, 0.2 * typical),
                        "\(route): registered minus new, paired: \(gap) s of a typical \(typical) s")
                }
                // The registered owners heard of each sign-up with their address (twice each), as did the new
                // addresses' at their second; nobody got a second account. Sign-up sent 24 verifications,
                // recovery 48 codes, and the verification route none (no account there awaits one).
                let messages = try await sink.messages(atLeast: rounds * 6)
                let notices = messages.filter { ($0["subject"] as? String)?.hasPrefix("Someone tried to sign up") == true }
                    .compactMap { ($0["rcpt_tos"] as? [String])?.first }
                #expect(notices.filter { $0.hasPrefix("known-") }.count == rounds * 2, "\(notices)")
                #expect(notices.filter { $0.hasPrefix("sign_up-new-") }.count == rounds, "\(notices)")
                let accounts = try await gateway.client.query(
                    "SELECT count(*)::int FROM password_users WHERE app_id = \(app.appID.uuid) AND email LIKE 'known-%'",
                    logger: TestDatabase.logger)
                for try await count in accounts.decode(Int.self) { #expect(count == rounds) }
            }
        }
    }

    /// A sign-up with an address that has an account, verified or not,
    /// changes nothing of it: the first sign-up's password and sessions stay,
    /// the second's password signs nobody in, and the address hears of it.
    /// (A stranger's sign-up between the owner's and their verification once
    /// gave the owner's account the stranger's password.)
    @Test func aSecondSignUpNeverTakesAnAccountOver() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink, signUp: .open)
                #expect(try await gateway.account("sign_up", app, ["email": "noa@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "noa@example.com", in: app))
                let session = try #require(try await gateway.passwordSignIn(app, userID, Self.password).refreshToken)
                let second = try await gateway.account(
                    "sign_up", app, ["email": "NOA@example.com", "password": "a stranger's password", "first_name": "Mallory"])
                #expect(second.status == .accepted)
                #expect(try await gateway.passwordSignIn(app, userID, "a stranger's password").status == .unauthorized)
                let owner = try await gateway.passwordSignIn(app, userID, Self.password)
                #expect(owner.status == .ok, "\(owner.body)")
                #expect(owner.claims["first_name"] == nil, "the stranger's profile was not written")
                #expect(try await gateway.refresh(app, session).status == .ok, "the owner's session was not ended")
                let messages = try await sink.messages(atLeast: 2)
                #expect(messages.map { $0["subject"] as? String ?? "" }.sorted() == [
                    "Confirm your Shop address: " + (sentCode(in: messages[0]) ?? sentCode(in: messages[1]) ?? "?"),
                    "Someone tried to sign up to Shop with your address",
                ])
                let found = try await gateway.client.query(
                    "SELECT detail ->> 'account' FROM audit_events WHERE event = 'account.sign_up' ORDER BY id",
                    logger: TestDatabase.logger)
                var accounts: [String?] = []
                for try await account in found.decode(String?.self) { accounts.append(account) }
                #expect(accounts == ["created", "exists"])
            }
        }
    }

    /// Status, body and headers, but the request's own id, the date and the limits' running counts.
    static func shape(of response: TestResponse) -> String {
        let headers = response.headers.filter {
            !["x-request-id", "ratelimit", "ratelimit-policy", "date"].contains($0.name.canonicalName)
        }.map { "\($0.name.canonicalName): \($0.value)" }.sorted()
        return "\(response.status.code) \(text(response)) \(headers)"
    }

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

    /// Sign-ups from many addresses at once over two replicas: the app's
    /// limit and the client's hold exactly, and one address gets one
    /// account however many ask for it at once.
    @Test func signUpFloodsMeetTheirLimitsAndOneAddressGetsOneAccount() async throws {
        try await SMTPSink.with { sink in
            let limits = RateLimitSettings.selfServiceTests([RateLimitPolicy.signUpsPerApp.with(limit: 25, periodSeconds: 86_400)])
            try await withTwoInstances(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: limits) { gateways in
                let app = try await gateways[0].createSelfServiceApp(sink)
                let spread = try await statuses(on: gateways, paths: ["/v1/accounts/sign_up"]) { index in
                    ["app_id": app.appID.uuid.uuidString, "email": "flood-\(index)@example.com", "password": Self.password]
                }
                #expect(spread.filter { $0 == 202 }.count == 25, "\(spread)")
                #expect(spread.allSatisfy { $0 == 202 || $0 == 429 }, "\(spread)")
                let one = try await statuses(on: gateways, paths: ["/v1/accounts/sign_up"]) { index in
                    ["app_id": app.appID.uuid.uuidString, "email": "same@example.com", "password": "password \(index) here"]
                }
                #expect(one.filter { $0 == 202 }.count <= 1, "\(one)")
                let accounts = try await gateways[0].client.query(
                    "SELECT count(*)::int FROM password_users WHERE app_id = \(app.appID.uuid)", logger: TestDatabase.logger)
                for try await count in accounts.decode(Int.self) { #expect(count == 25, "one address made more than one account") }

                // One client (every request of a router test comes from one) against the app's sign_ups_ip.
                let perClient = try await gateways[0].createSelfServiceApp(sink) {
                    $0.rateLimits = [RateLimitPolicy.signUpsPerIP.name: RateLimitOverride(limit: 7, periodSeconds: 3600)]
                }
                let fromOneClient = try await statuses(on: gateways, paths: ["/v1/accounts/sign_up"]) { index in
                    ["app_id": perClient.appID.uuid.uuidString, "email": "client-\(index)@example.com", "password": Self.password]
                }
                #expect(fromOneClient.filter { $0 == 202 }.count == 7, "\(fromOneClient)")
                #expect(fromOneClient.allSatisfy { $0 == 202 || $0 == 429 }, "\(fromOneClient)")
            }
        }
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

    /// An operator lists the accounts still waiting for their address and
    /// sends one a new code, which replaces the sign-up's; a verified
    /// account, or one whose address an admin typed, gets none.
    @Test func anOperatorSeesUnverifiedAccountsAndSendsThemANewCode() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink)
                let token = try await gateway.operatorToken()
                let users = "/admin/v1/apps/\(app.appID)/users"
                #expect(try await gateway.account("sign_up", app, ["email": "pia@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "pia@example.com", in: app))
                #expect(try await gateway.admin(.put, "\(users)/typed", token: token, json: ["password": Self.password, "email": "t@example.com"])
                    .status == .created)
                func listed(_ query: String) async throws -> [String] {
                    let page = try jsonObject(try await gateway.admin(.get, "\(users)?\(query)", token: token))
                    return (page["items"] as? [[String: Any]] ?? []).compactMap { $0["user_id"] as? String }
                }
                #expect(try await listed("email_verified=false") == [userID])
                #expect(try await listed("email_verified=true").isEmpty)
                #expect(try await gateway.admin(.get, "\(users)?email_verified=maybe", token: token).status == .badRequest)

                let first = try await sink.code(to: "pia@example.com", subject: "Confirm your Shop address", count: 1)
                let resent = try await gateway.admin(.post, "\(users)/\(userID)/verification", token: token)
                #expect(resent.status == .accepted, "\(text(resent))")
                let second = try await sink.code(to: "pia@example.com", subject: "Confirm your Shop address", count: 2)
                if first != second {
                    #expect(try await gateway.account("verification/confirm", app, ["email": "pia@example.com", "code": first]).status
                        == .unauthorized, "the sign-up's code died with the new one")
                }
                #expect(try await gateway.account("verification/confirm", app, ["email": "pia@example.com", "code": second]).status == .ok)
                #expect(try await listed("email_verified=true") == [userID])
                for (user, status) in [(userID, 409), ("typed", 409), ("nobody", 404)] {
                    let answer = try await gateway.admin(.post, "\(users)/\(user)/verification", token: token)
                    #expect(answer.status.code == status, "\(user): \(text(answer))")
                }
                let rows = try await gateway.auditRows().filter { $0.event == "admin.account.verification_sent" }
                #expect(rows.count == 1 && rows.first?.userID == userID)
            }
        }
    }

    @Test func anAppWithoutSelfServiceOffersNone() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink) { $0.selfService = nil }
                for route in ["sign_up", "password_reset", "verification", "deletion"] {
                    var body: [String: any Sendable] = ["email": "x@example.com"]
                    if route == "sign_up" { body["password"] = Self.password }
                    if route == "deletion" { body = ["refresh_token": "any"] }
                    let sent = body
                    let answer = try await gateway.account(route, app, sent)
                    let error = try jsonObject(answer)["error"] as? String
                    #expect(answer.status == .forbidden && error == "self_service_off", "\(route)")
                }
                let short = try await gateway.createSelfServiceApp(sink)
                let weak = try await gateway.account("sign_up", short, ["email": "x@example.com", "password": "short"])
                #expect(weak.status == .badRequest)
            }
        }
    }
}

/// The middle of `durations`, sorted.
func median(_ durations: [Duration]) -> Duration {
    let sorted = durations.sorted()
    return sorted.isEmpty ? .zero : sorted[sorted.count / 2]
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
