import Foundation
import IdentityGatewayClient
import Testing

/// `identityToken(forNonce:)` under the mistakes other SDKs shipped: many
/// callers at once, a lost answer, a sign-out while a refresh is out, two
/// processes over one store, a store that fails. Each counts what reached
/// the gateway and what it recorded.
@Suite struct ChallengeTests {
    /// Firebase iOS #15474: refreshes at once at launch signed users out.
    /// Here 50 callers at once share one refresh: one request reaches the
    /// gateway carrying every nonce, each caller gets the token of its own
    /// nonce, and the family moves one generation. (The gathering window
    /// is a second here so that a loaded machine starts all 50 within it;
    /// an app's default is 10 ms.)
    @Test func fiftyConcurrentChallengesShareOneRefresh() async throws {
        try await ClientGateway.with { gateway in
            let client = gateway.client(refreshGatheringWindow: .seconds(1))
            try await gateway.signIn(client)
            let sessionID = try #require(try await client.session()).sessionID
            let tokens = try await Self.challenges(50, to: client)
            #expect(tokens.count == 50)
            for token in tokens {
                #expect(try claims(of: token)["nce"] as? String == token.nonce)
                #expect(try claims(of: token)["prn"] as? String == "alice")
            }
            #expect(Set(tokens.map(\.nonce)).count == 50)
            let refreshes = try await gateway.passed().filter { $0.kind == "refresh_token" }
            #expect(refreshes.count == 1)
            #expect(refreshes.allSatisfy { $0.status == 200 })
            #expect(try await gateway.rows("token.issued", session: "refreshed") == 1)
            #expect(try await gateway.rows("session.reuse_detected") == 0)
            let session = try await gateway.session(sessionID)
            #expect(session.generation == 1)
            #expect(!session.revoked)
        }
    }

    /// More callers than one refresh carries (64 nonces): the rest are
    /// answered by the next refresh, one at a time in the lane, and the
    /// family stays whole.
    @Test func moreChallengesThanOneRefreshCarriesTakeTurns() async throws {
        try await ClientGateway.with { gateway in
            let client = gateway.client(refreshGatheringWindow: .seconds(1))
            try await gateway.signIn(client)
            let sessionID = try #require(try await client.session()).sessionID
            let tokens = try await Self.challenges(100, to: client)
            #expect(Set(tokens.map(\.nonce)).count == 100)
            for token in tokens { #expect(try claims(of: token)["nce"] as? String == token.nonce) }
            #expect(try await gateway.mostRefreshesInFlight() == 1)
            #expect(try await gateway.passed().filter { $0.kind == "refresh_token" }.count == 2)
            #expect(try await gateway.session(sessionID).generation == 2)
            #expect(try await gateway.rows("session.reuse_detected") == 0)
        }
    }

    static func challenges(_ count: Int, to client: GatewayClient) async throws -> [IdentityToken] {
        try await withThrowingTaskGroup(of: IdentityToken.self) { group in
            for challenge in 0..<count {
                group.addTask { try await client.identityToken(forNonce: "challenge-\(challenge)") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// Another SDK's token is the same call with its profile, and the
    /// session refreshes into whichever profile each call asks for.
    @Test func aChallengeIsAnsweredInTheProfileItAsksFor() async throws {
        let profiles: [any Sendable] = [
            ["type": "layer"] as [String: any Sendable],
            ["type": "stream", "api_key": "client-tests", "api_secret": "a-stream-api-secret-of-32-bytes!"] as [String: any Sendable],
        ]
        try await ClientGateway.with(["token_profiles": profiles]) { gateway in
            let client = gateway.client()
            let signedIn = try await gateway.signIn(client)
            #expect(signedIn.profile == .layer)
            let stream = try await client.identityToken(forNonce: "for-stream", profile: .stream)
            #expect(stream.profile == .stream)
            #expect(try claims(of: stream)["user_id"] as? String == "alice")
            let layer = try await client.identityToken(forNonce: "for-layer")
            #expect(layer.profile == .layer)
            #expect(try claims(of: layer)["prn"] as? String == "alice")
        }
    }

    /// Auth0.swift #490: an answer lost after the gateway rotated the
    /// session. The client sends the same token again; the gateway answers
    /// the same successor, and nothing counts as reuse.
    @Test func aRefreshWhoseAnswerIsLostIsSentAgainAndKeepsTheSession() async throws {
        try await ClientGateway.with { gateway in
            let store = MemorySessionStore()
            let client = gateway.client(store: store)
            try await gateway.signIn(client)
            let before = try #require(await store.load())
            try await gateway.faults(["drop_refresh_answers": 1])
            let token = try await client.identityToken(forNonce: "after-a-lost-answer")
            #expect(try claims(of: token)["nce"] as? String == "after-a-lost-answer")
            let refreshes = try await gateway.passed().filter { $0.kind == "refresh_token" }
            #expect(refreshes.map(\.dropped) == [true, false])
            #expect(refreshes.map(\.status) == [200, 200])
            #expect(try await gateway.rows("token.issued", session: "refreshed") == 1)
            #expect(try await gateway.rows("token.issued", session: "retried") == 1)
            #expect(try await gateway.rows("session.reuse_detected") == 0)
            let after = try #require(await store.load())
            #expect(after.sessionID == before.sessionID)
            #expect(after.refreshToken != before.refreshToken)
            // The stored successor is the live token.
            _ = try await client.identityToken(forNonce: "next")
            #expect(try await gateway.session(after.sessionID).generation == 2)
        }
    }

    /// supabase-swift #1371: a refresh that finished after sign-out was
    /// applied to the next user. Here its answer (a success: the gateway
    /// rotated before the sign-out reached it) is held until Alice signed
    /// out and Bob signed in; it is then discarded.
    @Test func aRefreshAnsweredAfterSignOutIsDiscardedAndTheNextUserKeepsTheirs() async throws {
        try await ClientGateway.with { gateway in
            let store = MemorySessionStore()
            let client = gateway.client(store: store)
            try await gateway.signIn(client, as: "alice")
            let alices = try #require(await store.load())
            try await gateway.faults(["hold_refresh_answers": true])
            let late = Task { try await client.identityToken(forNonce: "late") }
            try await gateway.refreshAnswersHeld(1)
            #expect(try await client.signOut())
            #expect(await store.load() == nil)
            try await gateway.faults(["hold_refresh_answers": false])
            try await gateway.signIn(client, as: "bob")
            let bobs = try #require(await store.load())
            try await gateway.release()
            await #expect(throws: IdentityGatewayError.signedOut) { try await late.value }
            #expect(await store.load() == bobs)
            #expect(bobs.userID == "bob")
            // The sign-out ended Alice's whole family, the successor the late answer carried too.
            #expect(try await gateway.session(alices.sessionID).revoked)
            #expect(try await gateway.passed().first { $0.kind == "refresh_token" }?.status == 200)
            let bobsToken = try await client.identityToken(forNonce: "bobs-challenge")
            #expect(try claims(of: bobsToken)["prn"] as? String == "bob")
        }
    }

    /// supabase-swift #703: an app and its widget over one keychain item
    /// removed each other's session. Two clients over one store, ten
    /// challenges each at once: every one is answered, and the session
    /// lives on (a token the other spent is answered its successor within
    /// the grace window, or the client takes the successor the other stored).
    @Test func twoProcessesOverOneStoreShareTheSession() async throws {
        try await ClientGateway.with { gateway in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("client-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("session.json")
            let app = gateway.client(store: FileSessionStore(url: file))
            let widget = gateway.client(store: FileSessionStore(url: file))
            try await gateway.signIn(app)
            let sessionID = try #require(try await app.session()).sessionID
            let answered = try await withThrowingTaskGroup(of: IdentityToken.self) { group in
                for challenge in 0..<10 {
                    group.addTask { try await app.identityToken(forNonce: "app-\(challenge)") }
                    group.addTask { try await widget.identityToken(forNonce: "widget-\(challenge)") }
                }
                return try await group.reduce(into: 0) { count, _ in count += 1 }
            }
            #expect(answered == 20)
            #expect(try await gateway.rows("session.reuse_detected") == 0)
            #expect(try await !gateway.session(sessionID).revoked)
            // A new launch over the same store continues it.
            let relaunched = gateway.client(store: FileSessionStore(url: file))
            _ = try await relaunched.identityToken(forNonce: "relaunched")
            #expect(try await relaunched.session()?.sessionID == sessionID)
        }
    }

    /// A successor the store failed to keep is reported, no token is
    /// returned, and the next launch (the spent token still stored)
    /// recovers it within the grace window.
    @Test func aStoreThatFailsToWriteIsReportedAndTheNextLaunchRecovers() async throws {
        try await ClientGateway.with { gateway in
            let kept = MemorySessionStore()
            let failing = FailingStore(kept)
            let client = gateway.client(store: failing)
            try await gateway.signIn(client)
            let spent = try #require(await kept.load())
            await failing.failNextSave()
            await #expect {
                try await client.identityToken(forNonce: "not-stored")
            } throws: { error in
                guard case IdentityGatewayError.storage = error else { return false }
                return true
            }
            #expect(await kept.load() == spent)
            let nextLaunch = gateway.client(store: kept)
            let token = try await nextLaunch.identityToken(forNonce: "recovered")
            #expect(try claims(of: token)["nce"] as? String == "recovered")
            #expect(try await gateway.rows("token.issued", session: "retried") == 1)
            #expect(try await gateway.rows("session.reuse_detected") == 0)
            _ = try await nextLaunch.identityToken(forNonce: "and-on")
            #expect(try await gateway.session(spent.sessionID).generation == 2)
        }
    }
}

/// A store over another whose next save fails, as a full disk or a locked keychain would.
actor FailingStore: IdentityGatewayClient.SessionStore {
    private let inner: any IdentityGatewayClient.SessionStore
    private var failing = false

    init(_ inner: any IdentityGatewayClient.SessionStore) {
        self.inner = inner
    }

    func failNextSave() { failing = true }

    func load() async throws -> StoredSession? { try await inner.load() }

    func save(_ session: StoredSession, replacing expected: String?) async throws -> Bool {
        if failing {
            failing = false
            throw CocoaError(.fileWriteOutOfSpace)
        }
        return try await inner.save(session, replacing: expected)
    }

    func remove(ifHolding refreshToken: String?) async throws { try await inner.remove(ifHolding: refreshToken) }
}
