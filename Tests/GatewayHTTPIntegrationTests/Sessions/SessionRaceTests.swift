import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// Single use across replicas: a refresh token spent at the same moment on
/// two gateway instances, again and again, never forks its family.
@Suite struct SessionRaceTests: ConcurrentAttack {
    static let rounds = 40
    static let senders = 6

    /// Each round, six requests present the live token at once, three on each
    /// instance: one spends it, the others get the same successor from the
    /// grace window, and the session moves one generation. Counted over all
    /// rounds: every answer a token, one successor a round, one rotation a round.
    @Test func twoInstancesRefreshingOneTokenAtOnceNeverForkItsFamily() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSessionApp(SessionSettings(reuseGraceSeconds: 60))
            let signedIn = try await gateways[0].signIn(app)
            let sessionID = try #require(signedIn.sessionID)
            var live = try #require(signedIn.refreshToken)
            var forks = 0
            var refused = 0
            for round in 0..<Self.rounds {
                let presented = live
                let answers = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for sender in 0..<Self.senders {
                        let gateway = gateways[sender % 2]
                        group.addTask {
                            let answer = try await gateway.refresh(app, presented, nonce: "round-\(round)-\(sender)")
                            return (Int(answer.status.code), answer.refreshToken)
                        }
                    }
                    return try await group.reduce(into: [(Int, String?)]()) { $0.append($1) }
                }
                refused += answers.filter { $0.0 != 200 }.count
                let successors = Set(answers.compactMap(\.1))
                if successors.count != 1 { forks += 1 }
                live = try #require(successors.first, "round \(round): \(answers.map(\.0))")
                #expect(try await gateways[1].sessionState(sessionID)?.generation == Int64(round + 1), "round \(round)")
            }
            #expect(refused == 0)
            #expect(forks == 0, "\(forks) of \(Self.rounds) rounds answered more than one successor")
            let state = try #require(try await gateways[0].sessionState(sessionID))
            #expect(state.generation == Int64(Self.rounds) && !state.ended)
            #expect(try await gateways[0].refresh(app, live).status == .ok)
            let issued = try await gateways[0].auditRows().filter { $0.event == "token.issued" }
            #expect(issued.count == 1 + Self.rounds * Self.senders + 1, "every token has its row")
        }
    }

    /// Reuse and a rotation of one session at the same moment on two
    /// instances (a thief and the user, past the grace window): however the
    /// race falls, the session ends, and no successor answered lives on.
    @Test func reuseRacingARotationEndsTheFamilyWhoeverWins() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSessionApp(SessionSettings(reuseGraceSeconds: 2))
            for _ in 0..<10 {
                let signedIn = try await gateways[0].signIn(app)
                let sessionID = try #require(signedIn.sessionID)
                let stolen = try #require(signedIn.refreshToken)
                let users = try #require(try await gateways[0].refresh(app, stolen).refreshToken)
                try await gateways[0].age(session: sessionID, by: 3)
                async let thief = gateways[0].refresh(app, stolen)
                async let user = gateways[1].refresh(app, users)
                let (thiefs, usersAnswer) = try await (thief, user)
                #expect(thiefs.status == .unauthorized)
                #expect(try await gateways[0].sessionState(sessionID)?.revokedReason == "reuse_detected")
                if let next = usersAnswer.refreshToken {
                    #expect(try await gateways[1].refresh(app, next).status == .unauthorized, "a successor outlived the reuse")
                }
            }
        }
    }

    /// A replica answers a refresh of the token it rotated to last without
    /// reading the session first (`RecentRotations`), and the database's
    /// statement overrules what it remembers: another replica rotated the
    /// session since, it went idle, it expired, an admin revoked it. Each is
    /// answered as a fresh reading would answer it, by the replica that
    /// remembered it live; counted, no token leaves for an ended session.
    @Test func whatAReplicaRemembersOfASessionGivesWayToTheDatabase() async throws {
        try await withTwoInstances { gateways in
            let (remembering, other) = (gateways[0], gateways[1])
            let app = try await remembering.createSessionApp(SessionSettings(reuseGraceSeconds: 60))
            let signedIn = try await remembering.signIn(app)
            let sessionID = try #require(signedIn.sessionID)
            let first = try #require(try await remembering.refresh(app, signedIn.refreshToken).refreshToken)
            // The other replica spends what the first remembers as live: the first then answers it from the grace window.
            let second = try #require(try await other.refresh(app, first).refreshToken)
            let retried = try await remembering.refresh(app, first)
            #expect(retried.status == .ok && retried.refreshToken == second, "the other replica's successor, not a fork")
            #expect(try await remembering.sessionState(sessionID)?.generation == 2)
            let third = try #require(try await remembering.refresh(app, second).refreshToken)
            #expect(try await other.refresh(app, third).status == .ok)

            let admin = try await remembering.adminToken(.app(app.appID))
            let endings: [(reason: String, end: (String) async throws -> Void)] = [
                (RefreshVerdict.Reason.idle, { session in
                    try await other.client.query(
                        "UPDATE sessions SET idle_expires_at = now() - interval '1 second' WHERE session_id = \(UUID(uuidString: session)!)",
                        logger: TestDatabase.logger)
                }),
                (RefreshVerdict.Reason.expired, { session in
                    try await other.client.query(
                        "UPDATE sessions SET expires_at = now() - interval '1 second' WHERE session_id = \(UUID(uuidString: session)!)",
                        logger: TestDatabase.logger)
                }),
                (RefreshVerdict.Reason.revoked, { session in
                    let ended = try await other.admin(.delete, "/admin/v1/apps/\(app.appID)/sessions/\(session)", token: admin)
                    #expect(ended.status == .noContent)
                }),
            ]
            var tokensForEndedSessions = 0
            for ending in endings {
                let started = try await remembering.signIn(app)
                let live = try #require(try await remembering.refresh(app, started.refreshToken).refreshToken)
                try await ending.end(try #require(started.sessionID))
                let refused = try await remembering.refresh(app, live)
                if refused.token != nil || refused.refreshToken != nil { tokensForEndedSessions += 1 }
                #expect(refused.status == .unauthorized, "\(ending.reason)")
                #expect(try await remembering.reason(of: refused) == ending.reason)
            }
            #expect(tokensForEndedSessions == 0)
        }
    }
}
