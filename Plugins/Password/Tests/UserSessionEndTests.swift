import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// A user's sessions end with what the admin API does to them (issue 58):
/// deleting or disabling them always, a new password unless the app's
/// `sessions.revoke_on_password_change` is off; each with its
/// `session.revoked` row. Deleting one also takes their second factor
/// (an `mfa.reset` row). Over memory and over PostgreSQL; and a sign-in
/// in flight while the user is deleted or disabled starts no session that
/// outlives it.
@Suite struct UserSessionEndTests: ConcurrentAttack {
    /// Signs `user` in with `password`; their refresh token.
    static func signIn(_ gateway: some GatewayUnderTest, _ app: AppSettings, _ user: String, _ password: String) async throws -> String {
        let body = passwordRequest(app, user: user, password: password)
        let answer = try jsonObject(try await gateway.test(over: .router) { try await $0.postJSON(body) })
        return try #require(answer["refresh_token"] as? String, "\(answer)")
    }

    static func refreshes(_ gateway: some GatewayUnderTest, _ app: AppSettings, _ token: String) async throws -> Bool {
        let body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "nonce": "n-\(UUID())",
            "credentials": ["type": "refresh_token", "refresh_token": token],
        ]
        return try await gateway.test(over: .router) { try await $0.postJSON(body) }.status == .ok
    }

    static func check(_ gateway: some GatewayUnderTest, revokesOnPasswordChange: Bool) async throws {
        var app = try await gateway.createPasswordApp()
        app = try await gateway.createApp(activeKey: true) { settings in
            settings = app
            settings.appID = AppID(uuid: UUID())
            settings.sessions = SessionSettings(revokeOnPasswordChange: revokesOnPasswordChange)
            settings.mfa = SecondFactorSettings(requirement: .optional)
        }
        let token = try await gateway.adminToken(.app(app.appID), expiresAt: nil, revoked: false, name: "test")
        for user in ["ada", "bob", "cy", "di"] {
            try await gateway.putUser(user, in: app, token: token, ["password": "correct horse \(user)"])
        }
        let sessions = try await [
            signIn(gateway, app, "ada", "correct horse ada"), signIn(gateway, app, "bob", "correct horse bob"),
            signIn(gateway, app, "cy", "correct horse cy"), signIn(gateway, app, "di", "correct horse di"),
        ]
        func path(_ user: String) -> String { "/admin/v1/apps/\(app.appID)/users/\(user)" }
        // What a sign-in's session asks once written (the verifier's lapse), for each user as their sign-in found them.
        let verifier = try await gateway.tenants.tenant(for: app.appID).verifier(for: "password")
        var found: [String: VerifiedIdentity] = [:]
        for user in ["ada", "bob", "cy", "di"] {
            let attempt = CredentialAttempt(
                app: app, userID: user, credentials: Credentials(type: "password", fields: ["password": "correct horse \(user)"]),
                requestID: "lapse", nonce: "n")
            guard case .verified(let identity) = try await verifier.verify(attempt) else { Issue.record("\(user)"); return }
            found[user] = identity
        }
        // A second factor for cy and di: a deleted user's goes with them (mfa.reset), another's stays.
        for user in ["cy", "di"] {
            #expect(try await gateway.admin(.post, path(user) + "/mfa", token: token, json: nil).status == .created)
        }
        #expect(try await gateway.admin(.patch, path("ada"), token: token, json: ["password": "a new horse staple"]).status == .ok)
        #expect(try await gateway.admin(.patch, path("bob"), token: token, json: ["disabled": true]).status == .ok)
        #expect(try await gateway.admin(.delete, path("cy"), token: token, json: nil).status == .noContent)
        #expect(try await gateway.admin(.patch, path("di"), token: token, json: ["display_name": "Di"]).status == .ok)

        for (user, lapse) in [
            ("ada", revokesOnPasswordChange ? "password_changed" : nil), ("bob", "user_disabled"), ("cy", "user_deleted"),
            ("di", nil),
        ] {
            #expect(try await verifier.lapse(of: try #require(found[user]), in: app) == lapse, "\(user)")
        }
        #expect(try await refreshes(gateway, app, sessions[0]) == !revokesOnPasswordChange)
        #expect(try await !refreshes(gateway, app, sessions[1]))
        #expect(try await !refreshes(gateway, app, sessions[2]))
        #expect(try await refreshes(gateway, app, sessions[3]), "a profile change ends nothing")
        #expect(try await gateway.admin(.get, path("cy") + "/mfa", token: token, json: nil).status == .notFound)
        #expect(try await gateway.admin(.get, path("di") + "/mfa", token: token, json: nil).status == .ok)
        let reset = try await gateway.auditRows().filter { $0.event == "mfa.reset" }
        #expect(reset.map(\.userID) == ["cy"] && reset.first?.text.contains("user_deleted") == true, "\(reset)")
        let rows = try await gateway.auditRows().filter { $0.event == "session.revoked" }
        let expected = (revokesOnPasswordChange ? ["ada"] : []) + ["bob", "cy"]
        #expect(rows.compactMap(\.userID) == expected)
        for (user, reason) in [("ada", "password_changed"), ("bob", "user_disabled"), ("cy", "user_deleted")] where expected.contains(user) {
            #expect(rows.first { $0.userID == user }?.text.contains(reason) == true, "\(user)")
        }
    }

    @Test(arguments: [true, false])
    func overMemory(revokesOnPasswordChange: Bool) async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { try await Self.check($0, revokesOnPasswordChange: revokesOnPasswordChange) }
    }

    @Test func overPostgreSQL() async throws {
        try await TestGateway.with(plugins: .passwordTests) { try await Self.check($0, revokesOnPasswordChange: true) }
    }
    /// A password app with sessions (and `mfa`) whose limits let a race's
    /// requests by the dozen through.
    static func racedApp(_ gateway: TestGateway, mfa: SecondFactorSettings?) async throws -> AppSettings {
        let limits = ["ip", "user_failures"].reduce(into: [String: RateLimitOverride]()) {
            $0[$1] = RateLimitOverride(limit: 100_000, periodSeconds: 60)
        }
        let passwords = try await gateway.createPasswordApp(rateLimits: limits)
        return try await gateway.createApp(activeKey: true) { settings in
            settings = passwords
            settings.appID = AppID(uuid: UUID())
            settings.sessions = SessionSettings()
            settings.mfa = mfa
        }
    }

    /// Six rounds, each a new user whose 12 password sign-ins go at once over
    /// the two instances with `change` to the user (`user_deleted`,
    /// `user_disabled`, `password_changed`) on the second; what `keep` takes
    /// of each sign-in's answer.
    static func race(
        _ change: String, _ gateways: [TestGateway], app: AppSettings, token: String,
        keep: @escaping @Sendable (TestResponse) throws -> String?
    ) async throws -> [String] {
        var kept: [String] = []
        for round in 0..<6 {
            let user = "user-\(round)"
            try await gateways[0].putUser(user, in: app, token: token, ["password": "correct horse \(user)"])
            let path = "/admin/v1/apps/\(app.appID)/users/\(user)"
            kept += try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    let answer =
                        switch change {
                        case "user_deleted": try await gateways[1].admin(.delete, path, token: token, json: nil)
                        case "user_disabled": try await gateways[1].admin(.patch, path, token: token, json: ["disabled": true])
                        default: try await gateways[1].admin(.patch, path, token: token, json: ["password": "a new horse staple"])
                        }
                    #expect([.noContent, .ok].contains(answer.status))
                    return nil
                }
                for index in 0..<12 {
                    group.addTask {
                        let body = passwordRequest(app, user: user, password: "correct horse \(user)")
                        return try keep(try await gateways[index % 2].test(over: .router) { try await $0.postJSON(body) })
                    }
                }
                return try await group.reduce(into: [String]()) { if let value = $1 { $0.append(value) } }
            }
        }
        return kept
    }

    /// Each round, 12 password sign-ins of one user over two instances go
    /// at once with the user's DELETE (or PATCH disabled, or a new password)
    /// on the second:
    /// those whose password was checked before the change but whose session
    /// was written after it would start a session the change never saw.
    /// Afterwards not one refresh token of them refreshes; a sign-in that
    /// found its user gone after writing its session ended it with a
    /// `session.revoked` row naming why.
    @Test(arguments: ["user_deleted", "user_disabled", "password_changed"])
    func signInsInFlightWhileTheUserChangesStartNoSessionThatOutlivesIt(change: String) async throws {
        try await withTwoInstances(plugins: .passwordTests) { gateways in
            let app = try await Self.racedApp(gateways[0], mfa: nil)
            let token = try await gateways[0].adminToken(.app(app.appID), expiresAt: nil, revoked: false, name: "test")
            let issued = try await Self.race(change, gateways, app: app, token: token) { answer in
                answer.status == .ok ? try #require(jsonObject(answer)["refresh_token"] as? String) : nil
            }
            var refreshed = 0
            for refreshToken in issued where try await Self.refreshes(gateways[0], app, refreshToken) { refreshed += 1 }
            #expect(refreshed == 0, "of \(issued.count) sessions started, \(refreshed) refreshed after their user's change")
            #expect(!issued.isEmpty, "no sign-in came before a change: the race never ran")
            let ended = try await gateways[0].auditRows().filter { $0.event == "session.revoked" }
            #expect(ended.allSatisfy { $0.text.contains(change) }, "\(ended)")
        }
    }
    /// Issue 76.7, raced: each round, 12 first steps of one user (whose app
    /// requires a second factor they do not have, so each right password is
    /// answered a ticket to enrol with) go at once over two instances with
    /// the user's change on the second. A first step whose password was
    /// checked before the change but whose ticket was kept after the change
    /// ended the user's tickets would hand out a ticket the change never
    /// saw. Afterwards not one ticket shown enrols a factor.
    @Test(arguments: ["user_deleted", "user_disabled", "password_changed"])
    func firstStepsInFlightWhileTheUserChangesHandOutNoTicketThatOutlivesIt(change: String) async throws {
        try await withTwoInstances(plugins: .passwordTests) { gateways in
            let app = try await Self.racedApp(gateways[0], mfa: SecondFactorSettings(requirement: .required))
            let token = try await gateways[0].adminToken(.app(app.appID), expiresAt: nil, revoked: false, name: "test")
            let tickets = try await Self.race(change, gateways, app: app, token: token) { answer in
                answer.status == .forbidden ? try jsonObject(answer)["mfa_ticket"] as? String : nil
            }
            var enrolled = 0
            for ticket in tickets {
                let body: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "mfa_ticket": ticket]
                let answer = try await gateways[0].test(over: .router) { try await $0.postJSON(body, to: "/v1/mfa/totp") }
                if answer.status == .created { enrolled += 1 }
            }
            #expect(enrolled == 0, "of \(tickets.count) tickets shown, \(enrolled) enrolled a factor after their user's change")
            // A first step that found its user changed once its ticket was kept is refused with the change as its reason.
            let caught = try await gateways[0].auditRows().filter { $0.event == "token.denied" && $0.reason == change }.count
            #expect(!tickets.isEmpty || caught > 0, "no first step came before a change: the race never ran")
        }
    }

    /// Second factors enrolled with the user's session while the other
    /// instance deletes them: each round, 8 enrolments go at once with the
    /// DELETE. Whichever lands before, between or after its steps, the user
    /// created again under the id has no factor, and each enrolment was
    /// answered 201, 401 (its session ended: the factor taken back) or 409
    /// (another enrolment of the user was being written).
    @Test func enrolmentsInFlightWhileTheUserIsDeletedLeaveNoFactor() async throws {
        try await withTwoInstances(plugins: .passwordTests) { gateways in
            let app = try await Self.racedApp(gateways[0], mfa: SecondFactorSettings(requirement: .optional))
            let token = try await gateways[0].adminToken(.app(app.appID), expiresAt: nil, revoked: false, name: "test")
            var inherited: [String] = []
            var statuses: [Int] = []
            for round in 0..<8 {
                let user = "user-\(round)"
                try await gateways[0].putUser(user, in: app, token: token, ["password": "correct horse \(user)"])
                let session = try await Self.signIn(gateways[0], app, user, "correct horse \(user)")
                let path = "/admin/v1/apps/\(app.appID)/users/\(user)"
                let enrolment: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "refresh_token": session]
                statuses += try await withThrowingTaskGroup(of: Int?.self) { group in
                    group.addTask {
                        let deleted = try await gateways[1].admin(.delete, path, token: token, json: nil)
                        #expect(deleted.status == .noContent)
                        return nil
                    }
                    for index in 0..<8 {
                        group.addTask {
                            Int(try await gateways[index % 2].test(over: .router) {
                                try await $0.postJSON(enrolment, to: "/v1/mfa/totp")
                            }.status.code)
                        }
                    }
                    return try await group.reduce(into: [Int]()) { if let status = $1 { $0.append(status) } }
                }
                try await gateways[1].putUser(user, in: app, token: token, ["password": "another horse \(user)"])
                if try await gateways[1].admin(.get, path + "/mfa", token: token, json: nil).status != .notFound {
                    inherited.append(user)
                }
            }
            #expect(inherited.isEmpty, "users created again who inherited a factor: \(inherited)")
            #expect(statuses.allSatisfy { [201, 401, 409].contains($0) }, "\(statuses)")
            #expect(statuses.contains(201), "no enrolment came before a deletion: the race never ran")
        }
    }
}
