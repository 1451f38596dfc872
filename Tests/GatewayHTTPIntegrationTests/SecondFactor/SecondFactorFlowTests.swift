import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// A second factor as a user lives it (issue 60): enrol with a session,
/// sign in in two steps, lose the phone; codes from pyotp, as an
/// authenticator app shows them.
@Suite struct SecondFactorFlowTests {
    @Test func aUserEnrolsWithTheirSessionAndThenSignsInInTwoSteps() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp()
            let alice = try await gateway.enrolledUser(app, "alice")
            let (authenticator, recoveryCodes, session) = (alice.authenticator, alice.recoveryCodes, alice.session)
            #expect(recoveryCodes.count == 10 && Set(recoveryCodes).count == 10)
            #expect(authenticator.uri.hasPrefix("otpauth://totp/Test%20app:alice?secret="))

            let first = try await gateway.firstFactor(app, nonce: "challenge-7")
            #expect(first.status == .forbidden, "\(first.body)")
            #expect(first.error == "mfa_required")
            #expect(first.token == nil && first.refreshToken == nil)
            #expect(first.body["mfa_methods"] as? [String] == ["totp", "recovery_code"])
            #expect(first.body["mfa_ticket_expires_in"] as? Int == 300)
            let ticket = try #require(first.ticket)
            #expect(MFATicket(text: ticket) != nil)
            #expect(try await gateway.deniedReason(first) == "mfa_required")

            let second = try await gateway.secondStep(app, ticket: ticket, code: alice.nextCode, nonce: "challenge-7")
            #expect(second.status == .ok, "\(second.body)")
            #expect(second.claims["prn"] as? String == "alice")
            #expect(second.claims["nce"] as? String == "challenge-7")
            #expect(second.claims["display_name"] as? String == "Alice L.", "the first factor's profile")
            let newSession = try #require(second.sessionID)
            let issued = try await gateway.auditRowsOnceWritten(requestID: second.requestID, event: "token.issued")
            #expect(issued.first?.text.contains(#"first_factor"#) == true, "\(issued)")
            #expect(!issued.contains { $0.text.contains(ticket) })

            // The session remembers both factors, and so does every refresh of it.
            let token = try await gateway.adminToken(.app(app.appID))
            let listed = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users/alice/sessions", token: token)
            let items = try #require(try JSONSerialization.jsonObject(with: Data(listed.body.readableBytesView)) as? [String: Any])["items"]
                as? [[String: Any]]
            let methods = items?.first { $0["session_id"] as? String == newSession }?["amr"] as? [String]
            #expect(methods == ["pwd", "otp", "mfa"], "\(items ?? [])")
            #expect(try await gateway.refresh(app, second.refreshToken).status == .ok)
            // The enrolling session was not spent by enrolling.
            #expect(try await gateway.refresh(app, session).status == .ok)

            let shown = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users/alice/mfa", token: token)
            let factor = try #require(try JSONSerialization.jsonObject(with: Data(shown.body.readableBytesView)) as? [String: Any])
            #expect(factor["confirmed"] as? Bool == true && factor["recovery_codes_left"] as? Int == 10)
            #expect(!String(buffer: shown.body).contains(authenticator.uri.split(separator: "=")[1].prefix(16)), "no secret shown")
        }
    }

    @Test func anAppThatRequiresAFactorSendsAUserWithoutOneToEnrolWithTheTicket() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp(.required)
            let first = try await gateway.firstFactor(app, user: "carol")
            #expect(first.status == .forbidden)
            #expect(first.error == "mfa_enrollment_required")
            #expect(first.body["mfa_methods"] as? [String] == ["totp"])
            let ticket = try #require(first.ticket)
            #expect(try await gateway.deniedReason(first) == "mfa_enrollment_required")

            let enrolled = try await gateway.mfaRoute("/v1/mfa/totp", ["app_id": app.appID.uuid.uuidString, "mfa_ticket": ticket])
            #expect(enrolled.status == .created, "\(enrolled.body)")
            let authenticator = Authenticator(uri: try #require(enrolled.body["otpauth_uri"] as? String))
            // A recovery code does not confirm a factor: only its own code does.
            let codes = try #require(enrolled.body["recovery_codes"] as? [String])
            let early = try await gateway.secondStep(app, ticket: ticket, code: codes[0], type: "recovery_code")
            #expect(early.status == .unauthorized)
            let codesNow = try await authenticator.codes()
            let done = try await gateway.secondStep(app, ticket: ticket, code: codesNow[0]!)
            #expect(done.status == .ok, "\(done.body)")
            #expect(done.claims["prn"] as? String == "carol")

            // From now on carol's sign-ins ask for her code.
            let again = try await gateway.firstFactor(app, user: "carol", nonce: "n2")
            #expect(again.error == "mfa_required")
            let next = codesNow[1]!
            #expect(try await gateway.secondStep(app, ticket: again.ticket, code: next, nonce: "n2").status == .ok)
        }
    }

    /// An operator enrols a factor for a user (to hand its secret over);
    /// the user's next sign-in, in an app that requires one, confirms it with
    /// its first code. Once confirmed, another enrolment is refused.
    @Test func anAdminEnrolsAFactorThatTheUsersFirstCodeConfirms() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp(.required)
            let token = try await gateway.adminToken(.app(app.appID))
            let path = "/admin/v1/apps/\(app.appID)/users/oscar/mfa"
            let first = try await gateway.admin(.post, path, token: token)
            #expect(first.status == .created && first.headers[.cacheControl] == "no-store")
            let replaced = try jsonObject(try await gateway.admin(.post, path, token: token))
            let authenticator = Authenticator(uri: try #require(replaced["otpauth_uri"] as? String))
            #expect(try await gateway.auditRows().filter { $0.event == "mfa.enrolled" }.count == 2)
            // Waiting for its first code: confirmed_at and last_used_at are there, as null (openapi.yaml requires them).
            let waiting = try jsonObject(try await gateway.admin(.get, path, token: token))
            #expect(waiting["confirmed"] as? Bool == false && waiting["confirmed_at"] is NSNull && waiting["last_used_at"] is NSNull, "\(waiting)")

            let signIn = try await gateway.firstFactor(app, user: "oscar")
            #expect(signIn.error == "mfa_enrollment_required")
            let done = try await gateway.secondStep(app, ticket: signIn.ticket, code: try await authenticator.code())
            #expect(done.status == .ok, "\(done.body)")
            let shown = try jsonObject(try await gateway.admin(.get, path, token: token))
            #expect(shown["confirmed"] as? Bool == true)
            #expect(try await gateway.admin(.post, path, token: token).status == .conflict)

            let off = try await gateway.createSessionApp()
            let refused = try await gateway.admin(.post, "/admin/v1/apps/\(off.appID)/users/oscar/mfa", token: try await gateway.adminToken(.operator))
            #expect(refused.status == .badRequest)
        }
    }

    @Test func anAppWithoutTheSecondFactorAnswersAsBeforeAndTakesNoCodes() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            #expect(try await gateway.firstFactor(app).status == .ok)
            let refused = try await gateway.secondStep(app, ticket: MFATicket().text, code: "123456")
            #expect(refused.status == .badRequest && refused.error == "unsupported_credential_type")
            let route = try await gateway.mfaRoute("/v1/mfa/totp", ["app_id": app.appID.uuid.uuidString, "refresh_token": "x"])
            #expect(route.status == .badRequest)
        }
    }

    /// A user who lost their phone: the app's admin resets the factor (a
    /// row names who), the old secret's codes and recovery codes stop
    /// working, a ticket taken before the reset is worth nothing, and the
    /// next sign-in asks for no code.
    @Test func aResetFactorsOldSecretAndCodesAreWorthNothing() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp()
            let dave = try await gateway.enrolledUser(app, "dave")
            let (authenticator, recoveryCodes) = (dave.authenticator, dave.recoveryCodes)
            let pending = try #require(try await gateway.firstFactor(app, user: "dave").ticket)
            let token = try await gateway.adminToken(.app(app.appID))
            let reset = try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID)/users/dave/mfa", token: token)
            #expect(reset.status == .noContent)
            let rows = try await gateway.auditRows().filter { $0.event == "mfa.reset" }
            #expect(rows.count == 1 && rows[0].userID == "dave")
            let actors = try await gateway.client.query(
                "SELECT count(*)::int FROM audit_events WHERE event = 'mfa.reset' AND actor IS NOT NULL", logger: TestDatabase.logger)
            for try await count in actors.decode(Int.self) { #expect(count == 1, "the reset names its admin") }

            let stale = try await gateway.secondStep(app, ticket: pending, code: try await authenticator.code())
            #expect(stale.status == .unauthorized)
            #expect(try await gateway.deniedReason(stale) == "mfa_no_factor")
            let stale2 = try await gateway.secondStep(app, ticket: pending, code: recoveryCodes[0], type: "recovery_code")
            #expect(stale2.status == .unauthorized)
            #expect(try await gateway.firstFactor(app, user: "dave").status == .ok, "no factor, no second step")
            #expect(try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID)/users/dave/mfa", token: token).status == .notFound)
            #expect(try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users/dave/mfa", token: token).status == .notFound)
        }
    }

    @Test func recoveryCodesWorkOnceAndAreReplacedOnlyWithACode() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp()
            let erin = try await gateway.enrolledUser(app, "erin")
            let (authenticator, recoveryCodes, session) = (erin.authenticator, erin.recoveryCodes, erin.session)
            let ticket = try await gateway.firstFactor(app, user: "erin").ticket
            // As a user may type it: upper case, a space for the dash.
            let typed = recoveryCodes[3].uppercased().replacingOccurrences(of: "-", with: " ")
            let used = try await gateway.secondStep(app, ticket: ticket, code: typed, type: "recovery_code")
            #expect(used.status == .ok, "\(used.body)")
            let again = try await gateway.firstFactor(app, user: "erin", nonce: "n2").ticket
            let twice = try await gateway.secondStep(app, ticket: again, code: recoveryCodes[3], type: "recovery_code", nonce: "n2")
            #expect(twice.status == .unauthorized)
            #expect(try await gateway.deniedReason(twice) == "recovery_code_invalid")

            let appID = app.appID.uuid.uuidString
            let wrong = try await gateway.mfaRoute("/v1/mfa/recovery_codes", ["app_id": appID, "refresh_token": session, "code": "000000"])
            let shownNow = try await authenticator.code()
            #expect(wrong.status == .unauthorized || shownNow == "000000")
            let replaced = try await gateway.mfaRoute(
                "/v1/mfa/recovery_codes", ["app_id": appID, "refresh_token": session, "code": erin.nextCode])
            #expect(replaced.status == .ok, "\(replaced.body)")
            let fresh = try #require(replaced.body["recovery_codes"] as? [String])
            #expect(fresh.count == 10 && Set(fresh).isDisjoint(with: recoveryCodes))
            let old = try await gateway.secondStep(app, ticket: again, code: recoveryCodes[4], type: "recovery_code", nonce: "n2")
            #expect(old.status == .unauthorized, "the old codes stopped working")
            let new = try await gateway.secondStep(app, ticket: again, code: fresh[0], type: "recovery_code", nonce: "n2")
            #expect(new.status == .ok, "\(new.body)")
            // A second enrolment over a confirmed factor is refused.
            let over = try await gateway.mfaRoute("/v1/mfa/totp", ["app_id": appID, "refresh_token": session])
            #expect(over.status == .conflict)
        }
    }

    /// Every way a second step is refused, each 401 alike with its reason in the row.
    @Test func everyRefusedSecondStepIsA401WithItsReason() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp()
            let other = try await gateway.createSecondFactorApp()
            let frank = try await gateway.enrolledUser(app, "frank")
            _ = try await gateway.enrolledUser(app, "grace")
            let ticket = try #require(try await gateway.firstFactor(app, user: "frank").ticket)
            // Offsets from the confirmation's step, which is taken: -2 and 3 are out of the window
            // even if a step boundary passes during the test, 0 a replay, 1 the next good code.
            let codes = frank.codes
            var cases: [(TokenAnswer, String)] = []
            cases.append((try await gateway.secondStep(app, ticket: "mt1.nope", code: codes[0]!), "mfa_ticket_malformed"))
            cases.append((try await gateway.secondStep(app, ticket: MFATicket().text, code: codes[0]!), "mfa_ticket_unknown"))
            cases.append((try await gateway.secondStep(other, ticket: ticket, code: codes[0]!), "mfa_ticket_unknown"))
            cases.append((try await gateway.secondStep(app, ticket: ticket, code: codes[0]!, user: "grace"), "mfa_ticket_user_id"))
            cases.append((try await gateway.secondStep(app, ticket: ticket, code: codes[0]!, nonce: "another"), "mfa_ticket_nonce"))
            cases.append((try await gateway.secondStep(app, ticket: ticket, code: codes[-2]!), "mfa_code_invalid"))
            cases.append((try await gateway.secondStep(app, ticket: ticket, code: codes[3]!), "mfa_code_invalid"))
            cases.append((try await gateway.secondStep(app, ticket: ticket, code: "12345"), "mfa_code_invalid"))
            // The confirming code's step was taken: a replay.
            cases.append((try await gateway.secondStep(app, ticket: ticket, code: codes[0]!), "mfa_code_replayed"))
            #expect(try await gateway.secondStep(app, ticket: ticket, code: codes[1]!).status == .ok)
            cases.append((try await gateway.secondStep(app, ticket: ticket, code: codes[1]!), "mfa_ticket_spent"))
            let expiring = try #require(try await gateway.firstFactor(app, user: "frank", nonce: "n2").ticket)
            try await gateway.client.query(
                "UPDATE mfa_tickets SET expires_at = now() - interval '1 second' WHERE spent_at IS NULL",
                logger: TestDatabase.logger)
            cases.append((try await gateway.secondStep(app, ticket: expiring, code: codes[1]!, nonce: "n2"), "mfa_ticket_expired"))

            var bodies: Set<String> = []
            for (answer, reason) in cases {
                #expect(answer.status == .unauthorized, "\(reason): \(answer.body)")
                #expect(answer.token == nil)
                #expect(try await gateway.deniedReason(answer) == reason)
                bodies.insert("\(answer.error ?? "")|\(answer.body["message"] ?? "")")
            }
            #expect(bodies.count == 1, "\(bodies)")
        }
    }

    /// What deleting a user asks of the store (`forget`): their factor and
    /// every ticket of theirs go, so not even a ticket that would enrol a
    /// new factor completes a sign-in; another user's stay. Over PostgreSQL
    /// here and over memory in `PasskeyFlowTests`.
    @Test func aForgottenUsersTicketsCompleteNothing() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp(.required)
            let carol = try #require(try await gateway.firstFactor(app, user: "carol").ticket)
            let dave = try #require(try await gateway.firstFactor(app, user: "dave").ticket)
            let store = gateway.dependencies.stores.secondFactors
            func row(_ user: String) -> AuditEvent {
                AuditEvent(appID: app.appID, event: "mfa.reset", outcome: .success, userID: user, requestID: "forget-\(user)")
            }
            #expect(try await !store.forget("carol", in: app.appID, recording: row("carol")), "carol had no factor yet")

            let carolEnrols = try await gateway.mfaRoute("/v1/mfa/totp", ["app_id": app.appID.uuid.uuidString, "mfa_ticket": carol])
            #expect(carolEnrols.status == .unauthorized, "\(carolEnrols.body)")
            let daveEnrols = try await gateway.mfaRoute("/v1/mfa/totp", ["app_id": app.appID.uuid.uuidString, "mfa_ticket": dave])
            #expect(daveEnrols.status == .created, "\(daveEnrols.body)")

            #expect(try await store.forget("dave", in: app.appID, recording: row("dave")), "dave's factor, not yet confirmed")
            #expect(try await store.factor(of: "dave", in: app.appID) == nil)
            let authenticator = Authenticator(uri: try #require(daveEnrols.body["otpauth_uri"] as? String))
            let code = try #require(try await authenticator.codes()[0])
            #expect(try await gateway.secondStep(app, ticket: dave, code: code, user: "dave").status == .unauthorized)
            let rows = try await gateway.auditRows().filter { $0.event == "mfa.reset" }
            #expect(rows.map(\.requestID) == ["forget-dave"], "a row only where a factor went")
        }
    }

    /// Tickets are deleted by the maintenance pass a day after they expired, not before.
    @Test func maintenanceDeletesTicketsADayAfterTheyExpired() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp(.required)
            for user in ["ivan", "judy", "ken"] { #expect(try await gateway.firstFactor(app, user: user).ticket != nil) }
            let (client, logger) = (gateway.client, TestDatabase.logger)
            try await client.query(
                "UPDATE mfa_tickets SET expires_at = now() - interval '25 hours' WHERE user_id = 'ivan'", logger: logger)
            try await client.query(
                "UPDATE mfa_tickets SET expires_at = now() - interval '23 hours' WHERE user_id = 'judy'", logger: logger)
            try await AuditMaintenance(client: client, logger: logger, retentionDays: nil).runOnce()
            var left: [String] = []
            for try await user in try await client.query("SELECT user_id FROM mfa_tickets ORDER BY user_id", logger: logger)
                .decode(String.self)
            {
                left.append(user)
            }
            #expect(left == ["judy", "ken"])
        }
    }

    /// Debian's oathtool, given the secret the enrolment showed, is an authenticator too.
    @Test func oathtoolsCodeSignsIn() async throws {
        let oathtool = try SuiteEnvironment.value("GATEWAY_TEST_OATHTOOL")
        try await TestGateway.with { gateway in
            let app = try await gateway.createSecondFactorApp(.required)
            let ticket = try #require(try await gateway.firstFactor(app, user: "heidi").ticket)
            let enrolled = try await gateway.mfaRoute("/v1/mfa/totp", ["app_id": app.appID.uuid.uuidString, "mfa_ticket": ticket])
            let secret = try #require(enrolled.body["secret"] as? String)
            let shown = try await GatewayProcess.runProgram(oathtool, ["--totp", "--base32", secret], environment: [:])
            #expect(shown.status == 0, "\(shown.output)")
            let code = shown.output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await gateway.secondStep(app, ticket: ticket, code: code).status == .ok)
        }
    }
}
