import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Sessions as a client lives them (issue 58): sign in once, answer each
/// challenge with the refresh token, lose an answer and retry, sign out;
/// and every way a refresh is refused, each with its row.
@Suite struct SessionFlowTests {
    @Test func aSignInStartsASessionWhoseRefreshAnswersEachChallengeWithoutTheSecret() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            let signedIn = try await gateway.signIn(app, device: "Ada's phone")
            #expect(signedIn.status == .ok)
            let first = try #require(signedIn.refreshToken)
            #expect(RefreshToken(text: first) != nil)
            #expect(signedIn.sessionID == RefreshToken(text: first)?.sessionID.lowercasedText)
            #expect(signedIn.body["refresh_token_expires_in"] as? Int == SessionSettings().idleTimeoutSeconds)

            var live = first
            for round in 0..<3 {
                let nonce = "challenge-\(round)-\(UUID())"
                let refreshed = try await gateway.refresh(app, live, nonce: nonce)
                #expect(refreshed.status == .ok, "\(refreshed.body)")
                #expect(refreshed.claims["prn"] as? String == "alice")
                #expect(refreshed.claims["nce"] as? String == nonce)
                // The profile the sign-in gave goes on with the session.
                #expect(refreshed.claims["display_name"] as? String == "Alice L.")
                #expect(refreshed.sessionID == signedIn.sessionID)
                let next = try #require(refreshed.refreshToken)
                #expect(next != live)
                #expect(try await gateway.reason(of: refreshed) == nil)
                live = next
            }
            #expect(try await gateway.sessionState(try #require(signedIn.sessionID))?.generation == 3)
            let rows = try await gateway.auditRows().filter { $0.event == "token.issued" }
            #expect(rows.count == 4)
            for row in rows {
                #expect(row.text.contains(try #require(signedIn.sessionID)))
                #expect(!row.text.contains(first) && !row.text.contains(live))
            }
        }
    }

    @Test func anAppWithoutSessionsAnswersAsBeforeAndTakesNoRefreshToken() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let signedIn = try await gateway.signIn(app)
            #expect(signedIn.status == .ok)
            #expect(Set(signedIn.body.keys) == ["identity_token"])
            let refused = try await gateway.refresh(app, RefreshToken.first(of: UUID()).text)
            #expect(refused.status == .badRequest)
            #expect(refused.error == "unsupported_credential_type")
        }
    }

    /// The answer to a refresh lost on the network: the client sends the
    /// same token again within the grace window and gets the same successor;
    /// after the window, that is reuse, and the newest token of the family is
    /// dead too.
    @Test func aLostAnswerIsRetriedWithinTheGraceWindowAndIsReuseAfterIt() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp(SessionSettings(reuseGraceSeconds: 30))
            let signedIn = try await gateway.signIn(app)
            let sessionID = try #require(signedIn.sessionID)
            let spent = try #require(signedIn.refreshToken)
            let answered = try await gateway.refresh(app, spent)
            #expect(answered.status == .ok)
            let retried = try await gateway.refresh(app, spent)
            #expect(retried.status == .ok, "\(retried.body)")
            #expect(retried.refreshToken == answered.refreshToken)
            #expect(try await gateway.sessionState(sessionID)?.generation == 1, "the retry started no second branch")
            let retryRow = try await gateway.auditRowsOnceWritten(requestID: retried.requestID, event: "token.issued")
            #expect(retryRow.first?.text.contains("retried") == true)

            try await gateway.age(session: sessionID, by: 31)
            let reused = try await gateway.refresh(app, spent)
            #expect(reused.status == .unauthorized)
            #expect(reused.token == nil && reused.refreshToken == nil)
            #expect(try await gateway.reason(of: reused) == RefreshVerdict.Reason.reused)
            let newest = try await gateway.refresh(app, answered.refreshToken)
            #expect(newest.status == .unauthorized)
            #expect(try await gateway.reason(of: newest) == RefreshVerdict.Reason.revoked)
            #expect(try await gateway.sessionState(sessionID)?.revokedReason == "reuse_detected")
            let detected = try await gateway.auditRows().filter { $0.event == "session.reuse_detected" }
            #expect(detected.count == 1 && detected[0].userID == "alice")
        }
    }

    /// Issue 76.4: a token older than the last spent one is told from a
    /// forged one by a walk made only once the request's limits allowed it.
    /// The family's own token, two refreshes back, is still reuse and ends
    /// the session; a forged one under the same id and generation ends
    /// nothing; both count as the client's refused refreshes.
    @Test func anOlderTokenOfTheFamilyIsReuseAndAForgedOneEndsNothing() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp(SessionSettings(reuseGraceSeconds: 0))
            let signedIn = try await gateway.signIn(app)
            let sessionID = try #require(signedIn.sessionID)
            let first = try #require(signedIn.refreshToken)
            let second = try #require(try await gateway.refresh(app, first).refreshToken)
            let third = try #require(try await gateway.refresh(app, second).refreshToken)
            let firstToken = try #require(RefreshToken(text: first))
            let forged = RefreshToken(
                sessionID: firstToken.sessionID, generation: firstToken.generation, secret: RefreshToken.first(of: UUID()).secret)

            let refusedForged = try await gateway.refresh(app, forged.text)
            #expect(refusedForged.status == .unauthorized)
            #expect(try await gateway.reason(of: refusedForged) == RefreshVerdict.Reason.unknown)
            #expect(try await gateway.sessionState(sessionID)?.revokedReason == nil, "a forged token ends nothing")
            #expect(try await gateway.refresh(app, third).status == .ok, "the live token still refreshes")

            let reused = try await gateway.refresh(app, first)
            #expect(reused.status == .unauthorized)
            #expect(try await gateway.reason(of: reused) == RefreshVerdict.Reason.reused)
            #expect(try await gateway.sessionState(sessionID)?.revokedReason == "reuse_detected")
        }
    }

    /// A stolen token, used by the thief after the user refreshed (past the
    /// grace window), ends that session, and only that one: the user's other
    /// device goes on.
    @Test func aStolenTokenUsedAfterTheUsersRefreshEndsItsSessionAndNoOther() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp(SessionSettings(reuseGraceSeconds: 5))
            let phone = try await gateway.signIn(app, device: "phone")
            let tablet = try await gateway.signIn(app, device: "tablet")
            let stolen = try #require(phone.refreshToken)
            let users = try await gateway.refresh(app, stolen)
            #expect(users.status == .ok)
            try await gateway.age(session: try #require(phone.sessionID), by: 6)
            let thiefs = try await gateway.refresh(app, stolen)
            #expect(thiefs.status == .unauthorized)
            #expect(try await gateway.refresh(app, users.refreshToken).status == .unauthorized)
            let other = try await gateway.refresh(app, tablet.refreshToken)
            #expect(other.status == .ok, "the user's other session lives on")

            // And the other way round: the thief refreshes first; the user's own later refresh ends it.
            let laptop = try await gateway.signIn(app, device: "laptop")
            let copied = try #require(laptop.refreshToken)
            #expect(try await gateway.refresh(app, copied).status == .ok)
            try await gateway.age(session: try #require(laptop.sessionID), by: 6)
            #expect(try await gateway.refresh(app, copied).status == .unauthorized)
            #expect(try await gateway.sessionState(try #require(laptop.sessionID))?.revokedReason == "reuse_detected")
            #expect(try await gateway.refresh(app, other.refreshToken).status == .ok)
        }
    }

    /// Every refusal is the same 401 with the same body, and its row names why.
    @Test func everyRefusedRefreshIsTheSameAnswerAndItsRowSaysWhy() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp(SessionSettings(reuseGraceSeconds: 0))
            let otherApp = try await gateway.createSessionApp()
            func live() async throws -> (token: String, session: String) {
                let answer = try await gateway.signIn(app)
                return (try #require(answer.refreshToken), try #require(answer.sessionID))
            }
            var cases: [(String?, String, String?)] = [
                (nil, RefreshVerdict.Reason.malformed, nil),
                ("rt1.not-a-token", RefreshVerdict.Reason.malformed, nil),
                (RefreshToken.first(of: UUID()).text, RefreshVerdict.Reason.unknown, nil),
            ]
            let foreign = try #require(try await gateway.signIn(otherApp).refreshToken)
            cases.append((foreign, RefreshVerdict.Reason.unknown, nil))
            let madeUp = RefreshToken(
                sessionID: RefreshToken(text: foreign)!.sessionID, generation: 0, secret: RefreshToken.first(of: UUID()).secret)
            cases.append((madeUp.text, RefreshVerdict.Reason.unknown, nil))
            let named = try await live()
            cases.append((named.token, RefreshVerdict.Reason.userID, "bob"))
            let idle = try await live()
            try await gateway.end(session: idle.session, .idle)
            cases.append((idle.token, RefreshVerdict.Reason.idle, nil))
            let expired = try await live()
            try await gateway.end(session: expired.session, .absolute)
            cases.append((expired.token, RefreshVerdict.Reason.expired, nil))
            let revoked = try await live()
            let token = try await gateway.adminToken(.app(app.appID))
            let ended = try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID)/sessions/\(revoked.session)", token: token)
            #expect(ended.status == .noContent)
            cases.append((revoked.token, RefreshVerdict.Reason.revoked, nil))

            var bodies: Set<String> = []
            for (presented, reason, user) in cases {
                let refused = try await gateway.refresh(app, presented, user: user)
                #expect(refused.status == .unauthorized, "\(reason)")
                #expect(refused.token == nil && refused.refreshToken == nil)
                #expect(try await gateway.reason(of: refused) == reason)
                bodies.insert("\(refused.body["error"] ?? "")|\(refused.body["message"] ?? "")")
            }
            #expect(bodies.count == 1, "\(bodies)")
            // The named user's mismatch ended nothing: the session still refreshes.
            #expect(try await gateway.refresh(app, named.token).status == .ok)
        }
    }

    @Test func aDisabledAppRefusesItsRefreshTokens() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            let live = try #require(try await gateway.signIn(app).refreshToken)
            let operatorToken = try await gateway.adminToken(.operator)
            let path = "/admin/v1/apps/\(app.appID)"
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: ["enabled": false]).status == .ok)
            gateway.tenants.invalidate(app.appID)  // as the change's notification does on every replica
            let refused = try await gateway.refresh(app, live)
            #expect(refused.status == .forbidden)
            #expect(refused.error == "app_disabled")
            #expect(try await gateway.reason(of: refused) == "app_disabled")
        }
    }

    /// The user's own sign-out, with any token of the family; the admin API's
    /// list (never a token) and its three ways to end sessions.
    @Test func signingOutAndTheAdminAPIEndSessions() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            let phone = try await gateway.signIn(app, device: "phone")
            let spent = try #require(phone.refreshToken)
            let live = try #require(try await gateway.refresh(app, spent).refreshToken)
            func signOut(_ token: String) async throws -> TestResponse {
                try await gateway.test {
                    try await $0.postJSON(["app_id": app.appID.uuid.uuidString, "refresh_token": token], to: "/v1/sessions/revoke")
                }
            }
            #expect(try await signOut(spent).status == .noContent)
            #expect(try await gateway.sessionState(try #require(phone.sessionID))?.revokedReason == "signed_out")
            #expect(try await gateway.refresh(app, live).status == .unauthorized)
            // The same answer for a token that ends nothing.
            #expect(try await signOut(RefreshToken.first(of: UUID()).text).status == .noContent)
            #expect(try await signOut(live).status == .noContent)

            let tablet = try await gateway.signIn(app, device: "tablet")
            let laptop = try await gateway.signIn(app, device: "laptop")
            let token = try await gateway.adminToken(.app(app.appID))
            let listed = try jsonObject(try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users/alice/sessions", token: token))
            let items = try #require(listed["items"] as? [[String: Any]])
            #expect(items.map { $0["device_label"] as? String } == ["laptop", "tablet"])
            #expect(items.allSatisfy { $0["credential_type"] as? String == "static" && $0["amr"] as? [String] == ["pwd"] })
            let everything = try jsonObject(
                try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users/alice/sessions?include_ended=true", token: token))
            #expect((everything["items"] as? [[String: Any]])?.count == 3)
            for secret in [spent, live, tablet.refreshToken ?? "none"] {
                #expect(!"\(listed)".contains(secret) && !"\(everything)".contains(secret))
            }

            let ended = try jsonObject(try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID)/users/alice/sessions", token: token))
            #expect(ended["revoked"] as? Int == 2)
            #expect(try await gateway.refresh(app, laptop.refreshToken).status == .unauthorized)
            _ = try await gateway.signIn(app)
            _ = try await gateway.signIn(app)
            let all = try jsonObject(try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID)/sessions", token: token))
            #expect(all["revoked"] as? Int == 2)
            let missing = try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID)/sessions/\(UUID())", token: token)
            #expect(missing.status == .notFound)
            let revokedRows = try await gateway.auditRows().filter { $0.event == "session.revoked" }
            #expect(revokedRows.count == 2)
        }
    }

    /// At most `max_sessions_per_user` live sessions: a new one ends the oldest.
    @Test func aUsersNewSessionPastTheMaximumEndsTheOldest() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createSessionApp(SessionSettings(maximumPerUser: 2))
            var answers: [TokenAnswer] = []
            for device in ["one", "two", "three"] { answers.append(try await gateway.signIn(app, device: device)) }
            #expect(try await gateway.sessionState(try #require(answers[0].sessionID))?.revokedReason == "session_limit")
            #expect(try await gateway.refresh(app, answers[0].refreshToken).status == .unauthorized)
            for answer in answers.dropFirst() { #expect(try await gateway.refresh(app, answer.refreshToken).status == .ok) }
        }
    }
}
