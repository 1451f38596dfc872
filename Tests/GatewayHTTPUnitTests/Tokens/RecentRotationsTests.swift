import Crypto
import Foundation
import GatewayCore
@testable import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import Testing

/// What a replica remembers of the sessions it rotated: only their live
/// token, a bounded number of them, and a refresh of that token reads
/// nothing first. That the database overrules it is
/// `SessionRaceTests.whatAReplicaRemembersOfASessionGivesWayToTheDatabase`.
@Suite struct RecentRotationsTests {
    private static func session(_ appID: AppID, _ token: RefreshToken) -> StoredSession {
        let now = Date()
        return StoredSession(
            appID: appID, sessionID: token.sessionID, userID: "alice", credentialType: "static", methods: ["pwd"],
            authTime: now, deviceLabel: nil, createdAt: now, lastUsedAt: now, idleExpiresAt: now + 3600,
            expiresAt: now + 86_400, generation: token.generation, tokenDigest: token.digest, previousDigest: nil,
            rotatedAt: nil, revokedAt: nil, revokedReason: nil)
    }

    /// The key successors are derived under, as the token path has it.
    private static func successorKey() throws -> SymmetricKey {
        RefreshTokens(store: InMemoryStores().stores.sessions, masterKey: try MasterKey(base64: MasterKey.generateBase64())).successorKey
    }

    @Test func onlyTheLiveTokenItLeftIsRecognised() throws {
        let recent = RecentRotations(capacity: 10)
        let appID = AppID(uuid: UUID())
        let key = try Self.successorKey()
        let spent = RefreshToken.first(of: UUID())
        let successor = spent.successor(under: key, in: appID)
        recent.remember(Self.session(appID, spent), spent: spent, successor: successor, idleTimeoutSeconds: 60, now: Date())

        let found = recent.session(whoseLiveTokenIs: successor, in: appID)
        #expect(found?.generation == 1 && found?.tokenDigest == successor.digest && found?.previousDigest == spent.digest)
        #expect(recent.session(whoseLiveTokenIs: spent, in: appID) == nil, "the spent token is judged on a reading")
        let guessed = RefreshToken(sessionID: successor.sessionID, generation: 1, secret: RefreshToken.first(of: UUID()).secret)
        #expect(recent.session(whoseLiveTokenIs: guessed, in: appID) == nil)
        #expect(recent.session(whoseLiveTokenIs: successor, in: AppID(uuid: UUID())) == nil, "another app's")
        recent.forget(successor.sessionID, in: appID)
        #expect(recent.session(whoseLiveTokenIs: successor, in: appID) == nil)
    }

    @Test func itRemembersAtMostItsCapacity() throws {
        let recent = RecentRotations(capacity: 100)
        let appID = AppID(uuid: UUID())
        let key = try Self.successorKey()
        var last: RefreshToken?
        for _ in 0..<250 {
            let spent = RefreshToken.first(of: UUID())
            let successor = spent.successor(under: key, in: appID)
            recent.remember(Self.session(appID, spent), spent: spent, successor: successor, idleTimeoutSeconds: 60, now: Date())
            last = successor
        }
        #expect(recent.count == 100)
        #expect(recent.session(whoseLiveTokenIs: last!, in: appID) != nil, "the newest is kept")
    }

    /// Over HTTP with the stores in memory: the first refresh reads its
    /// session, the next ones on this replica do not; once an admin ends the
    /// session, its live token is refused (read again) all the same.
    @Test func aReplicaRefreshingWhatItRotatedReadsNothingFirst() async throws {
        let gateway = MemoryGateway()
        let app = try await gateway.createApp { $0.sessions = SessionSettings() }
        let signedIn = try await gateway.send(.post, "/v1/identity_tokens", json: aliceRequest(app, nonce: "sign-in"))
        var live = try #require(signedIn.body["refresh_token"] as? String)
        let sessionID = try #require(signedIn.body["session_id"] as? String)
        for round in 0..<5 {
            let refreshed = try await gateway.send(
                .post, "/v1/identity_tokens",
                json: ["app_id": app.appID.description, "nonce": "challenge-\(round)",
                       "credentials": ["type": "refresh_token", "refresh_token": live]])
            #expect(refreshed.status == .ok)
            live = try #require(refreshed.body["refresh_token"] as? String)
        }
        #expect(gateway.memory.sessionReads == 1, "only the first refresh read its session")

        let admin = try await gateway.adminToken(.app(app.appID))
        #expect(try await gateway.send(.delete, "/admin/v1/apps/\(app.appID)/sessions/\(sessionID)", token: admin).status == .noContent)
        let refused = try await gateway.send(
            .post, "/v1/identity_tokens",
            json: ["app_id": app.appID.description, "nonce": "after",
                   "credentials": ["type": "refresh_token", "refresh_token": live]])
        #expect(refused.status == .unauthorized && refused.body["identity_token"] == nil)
        #expect(gateway.memory.events.last?.reason == RefreshVerdict.Reason.revoked)
        #expect(gateway.memory.sessionReads == 2, "the refused rotation read the session to say why")
    }
}
