import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayPluginPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import PasskeyTestSupport
import Testing

@testable import PasskeyPlugin

/// A user's change commits with its entry in the journal (`user_changes`),
/// so a request that stops between the change and its holders leaves what
/// they must hear for any replica's sweep: no new password or deletion
/// leaves a session or a one-factor passkey alive.
@Suite struct UserChangeJournalTests: ConcurrentAttack {
    /// A new password whose holders fail (PostgreSQL refuses every change
    /// to a session, as a failover in the middle would) is answered an
    /// error, but is in the journal; once sessions can change again, the
    /// other replica's sweep ends the session and the passkey it added.
    /// Before the journal, nothing ever did: the stolen session outlived
    /// the new password that was meant to end it.
    @Test func aChangeWhoseHoldersFailedIsFinishedByAnotherReplicasSweep() async throws {
        try await TestGateway.with(plugins: UserLifecycleWalkTests.plugins) { gateway in
            let app = try await Self.createApp(gateway)
            let token = try await gateway.operatorToken()
            let path = UserLifecycleWalkTests.userPath("frank", app)
            try await expectStatus(gateway.admin(.put, path, token: token, json: ["password": UserLifecycleWalkTests.password]), 201)
            let session = try await UserLifecycleWalkTests.signIn(gateway, app, "frank")
            let authenticator = SoftwareAuthenticator()
            #expect(try await gateway.register(authenticator, app, refreshToken: session).status == .created)
            let handle = try await gateway.userHandle(of: session, app)

            try await gateway.sql(
                """
                CREATE FUNCTION refuse_session_changes() RETURNS trigger LANGUAGE plpgsql AS
                $$ BEGIN RAISE EXCEPTION 'sessions refused by the test'; END $$
                """)
            try await gateway.sql(
                "CREATE TRIGGER refuse_session_changes BEFORE UPDATE ON sessions FOR EACH ROW EXECUTE FUNCTION refuse_session_changes()")
            let patched = try await gateway.admin(.patch, path, token: token, json: ["password": UserLifecycleWalkTests.newPassword])
            #expect(patched.status.code >= 500, "the holders failed: \(patched.status) \(String(buffer: patched.body))")
            #expect(try await gateway.count("SELECT count(*)::int FROM user_changes") == 1, "the change is journaled")
            try await gateway.sql("DROP TRIGGER refuse_session_changes ON sessions")

            try await gateway.withReplica { replica in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await replica.dependencies.userLifecycle.sweepUntilCancelled(every: .milliseconds(50), olderThan: .zero) }
                    defer { group.cancelAll() }
                    try await gateway.waitUntil("the sweep finished the change") {
                        try await gateway.count("SELECT count(*)::int FROM user_changes") == 0
                    }
                }
            }
            let refreshed = try await gateway.post(
                ["app_id": app.appID.uuid.uuidString, "nonce": "n", "credentials": ["type": "refresh_token", "refresh_token": session]],
                to: "/v1/identity_tokens")
            #expect(refreshed.status == .unauthorized, "the session outlived the new password: \(refreshed.text)")
            let assertion = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
                userHandle: handle, signCount: 1)
            let passkey = try await gateway.post(MemoryGateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
            #expect(passkey.status == .unauthorized, "the one-factor passkey outlived the new password: \(passkey.text)")
            let revoked = try await gateway.auditRows().filter { $0.event == "session.revoked" || $0.event == "passkey.revoked" }
            #expect(revoked.map(\.event).sorted() == ["passkey.revoked", "session.revoked"], "\(revoked)")
            #expect(revoked.allSatisfy { $0.text.contains("password_changed") && $0.requestID == patched.headers[.init("x-request-id")!] }, "\(revoked)")
        }
    }

    /// Twelve unfinished changes, swept by both replicas at once: each is
    /// claimed and finished by one sweep (the finished counts add up to
    /// twelve, none twice), every session ends once, the journal is empty.
    @Test func twoReplicasSweepingAtOnceFinishEachChangeOnce() async throws {
        try await withTwoInstances(plugins: UserLifecycleWalkTests.plugins) { gateways in
            let gateway = gateways[0]
            let app = try await Self.createApp(gateway)
            let token = try await gateway.operatorToken()
            let users = (0..<12).map { "user-\($0)" }
            var changes: [UserChange] = []
            for user in users {
                try await expectStatus(
                    gateway.admin(
                        .put, UserLifecycleWalkTests.userPath(user, app), token: token, json: ["password": UserLifecycleWalkTests.password]),
                    201)
                _ = try await UserLifecycleWalkTests.signIn(gateway, app, user)
                changes.append(UserChange(.sessionsEnded, of: user, in: app.appID, requestID: "sweep-\(user)", actor: nil))
            }
            try await gateway.pluginServices.userChanges.record(changes)
            async let first = gateways[0].dependencies.userLifecycle.finishUnfinished(olderThan: .zero, limit: 5)
            async let second = gateways[1].dependencies.userLifecycle.finishUnfinished(olderThan: .zero, limit: 5)
            var finished = try await first + second
            // What is left (each sweep took at most five), swept by both in turn.
            while try await gateway.count("SELECT count(*)::int FROM user_changes") > 0 {
                async let again = gateways[1].dependencies.userLifecycle.finishUnfinished(olderThan: .zero, limit: 5)
                finished += try await gateways[0].dependencies.userLifecycle.finishUnfinished(olderThan: .zero, limit: 5)
                finished += try await again
            }
            #expect(finished == 12, "a change was finished twice or not at all")
            let revoked = try await gateway.auditRows().filter { $0.event == "session.revoked" }
            #expect(revoked.count == 12 && Set(revoked.compactMap(\.userID)) == Set(users), "\(revoked.count) sessions ended")
            #expect(try await gateway.count("SELECT count(*)::int FROM sessions WHERE revoked_at IS NULL") == 0)
        }
    }

    static func createApp(_ gateway: TestGateway) async throws -> AppSettings {
        try await gateway.createApp(activeKey: true) { app in
            app.credentialTypes = ["password", "passkey"]
            app.sessions = SessionSettings()
            app.plugins = [
                "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
                "passkey": .object(["rp_id": .string(MemoryGateway.rpID)]),
            ]
            app.rateLimits = ["ip": RateLimitOverride(limit: 100_000, periodSeconds: 60)]
        }
    }
}

extension TestGateway {
    /// Runs a statement of the test's own (a fault to inject, and its removal).
    func sql(_ statement: String) async throws {
        try await client.query(PostgresQuery(unsafeSQL: statement), logger: TestDatabase.logger)
    }

    /// The single integer `query` answers.
    func count(_ query: String) async throws -> Int {
        let rows = try await client.query(PostgresQuery(unsafeSQL: query), logger: TestDatabase.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Polls `condition` until it holds, failing the test after 30 s: for work another task does on its own schedule.
    func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("not within 30 s: \(what)")
    }
}
