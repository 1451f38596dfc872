import Foundation
import GatewayTestSupport
import IdentityGatewayClient
import Testing

/// The gateway down, slow, limiting or refusing: typed errors, the session
/// kept, and no request sent again and again (supabase-swift #630: one
/// failure stopped refreshing for good; here the next call simply works).
@Suite struct RefusalTests {
    @Test func aGatewayThatCannotBeReachedIsANetworkErrorAndTheSessionStays() async throws {
        try await ClientGateway.with { gateway in
            let store = MemorySessionStore()
            let client = gateway.client(store: store, refreshRetryWindow: .seconds(1))
            try await gateway.signIn(client)
            let session = try #require(await store.load())
            try await gateway.faults(["refuse": true])
            let started = ContinuousClock.now
            await #expect(throws: IdentityGatewayError.network("the connection closed without an answer")) {
                try await client.identityToken(forNonce: "unreachable")
            }
            let waited = ContinuousClock.now - started
            // Sent again with backoff (0.2 s, 0.4 s, ...) only within the retry window.
            let attempts = try await gateway.passed().filter { $0.kind == "refresh_token" }.count
            #expect((2...4).contains(attempts), "\(attempts) attempts in \(waited)")
            #expect(await store.load() == session)

            // A port nobody listens on: the same error, the session kept.
            let nowhere = gateway.client(store: store, url: "http://127.0.0.1:1", refreshRetryWindow: .zero)
            await #expect(throws: IdentityGatewayError.network("cannot connect to the gateway")) {
                try await nowhere.identityToken(forNonce: "nowhere")
            }
            #expect(await store.load() == session)

            try await gateway.faults(["refuse": false])
            _ = try await client.identityToken(forNonce: "back")
            #expect(try await gateway.session(session.sessionID).generation == 1)
        }
    }

    @Test func aSlowGatewayTimesOutAsANetworkErrorAndTheNextCallRecovers() async throws {
        try await ClientGateway.with { gateway in
            let store = MemorySessionStore()
            try await gateway.signIn(gateway.client(store: store))
            let impatient = gateway.client(store: store, requestTimeout: .milliseconds(500), refreshRetryWindow: .zero)
            let session = try #require(await store.load())
            // Held before it reaches the gateway for longer than the client waits.
            try await gateway.faults(["delay_ms": 3000])
            await #expect(throws: IdentityGatewayError.network("timed out")) {
                try await impatient.identityToken(forNonce: "slow")
            }
            #expect(await store.load() == session)
            try await gateway.faults(["delay_ms": 0])
            // The late request reaches the gateway meanwhile or after: either way this one is answered
            // (a rotation, or the same successor within the grace window), and the session lives. A
            // client that waits as long as a loaded machine needs asks it.
            _ = try await gateway.client(store: store).identityToken(forNonce: "fast-again")
            #expect(await store.load()?.sessionID == session.sessionID)
            #expect(try await !gateway.session(session.sessionID).revoked)
        }
    }

    @Test func aRateLimitIsTypedWithItsRetryAfterAndQuietsTheClientUntilThen() async throws {
        // The sign-in and two refreshes fit the app's limit; the third refresh is over it.
        try await ClientGateway.with(["rate_limits": ["app": ["limit": 3, "period_seconds": 3600]]]) { gateway in
            let store = MemorySessionStore()
            let client = gateway.client(store: store)
            try await gateway.signIn(client)
            _ = try await client.identityToken(forNonce: "one")
            _ = try await client.identityToken(forNonce: "two")
            let session = try #require(await store.load())
            var retryAfter = Duration.zero
            do {
                _ = try await client.identityToken(forNonce: "three")
                Issue.record("the fourth token was issued past a limit of three")
            } catch IdentityGatewayError.rateLimited(let wait) {
                retryAfter = wait
            }
            #expect(retryAfter > .seconds(1))
            let sent = try await gateway.passed().count
            // Within Retry-After, calls fail at once and reach nobody.
            for nonce in ["four", "five", "six"] {
                await #expect {
                    try await client.identityToken(forNonce: nonce)
                } throws: { error in
                    guard case IdentityGatewayError.rateLimited(let left) = error else { return false }
                    return left <= retryAfter
                }
            }
            await #expect {
                try await client.signIn(userID: "alice", credential: .staticUser(password: "wonderland"), nonce: "seven")
            } throws: { error in
                guard case IdentityGatewayError.rateLimited = error else { return false }
                return true
            }
            #expect(try await gateway.passed().count == sent)
            #expect(await store.load() == session)
        }
    }

    @Test func refusalsAreTypedAndOnlyARefusedSessionSignsOut() async throws {
        try await ClientGateway.with { gateway in
            let store = MemorySessionStore()
            let client = gateway.client(store: store)
            await #expect(throws: IdentityGatewayError.signedOut) { try await client.identityToken(forNonce: "no-session-yet") }
            await #expect(throws: IdentityGatewayError.invalidCredentials) {
                try await client.signIn(userID: "alice", credential: .staticUser(password: "looking glass"), nonce: "n")
            }
            await #expect {
                try await client.signIn(userID: "alice", credential: .password("wonderland"), nonce: "n")
            } throws: { error in
                guard case IdentityGatewayError.refused(let code, _) = error else { return false }
                return code == "unsupported_credential_type"
            }
            try await gateway.signIn(client)
            let session = try #require(await store.load())

            let disabled = try await HTTPCall.send(
                "PATCH", "\(gateway.gatewayURL)/admin/v1/apps/\(gateway.appID)", token: gateway.bootstrap, json: ["enabled": false])
            try #require(disabled.status == 200, "\(disabled.text)")
            try await gateway.appEnabledHasArrived(false)
            await #expect(throws: IdentityGatewayError.appDisabled) { try await client.identityToken(forNonce: "disabled") }
            #expect(await store.load() == session)
            let enabled = try await HTTPCall.send(
                "PATCH", "\(gateway.gatewayURL)/admin/v1/apps/\(gateway.appID)", token: gateway.bootstrap, json: ["enabled": true])
            try #require(enabled.status == 200, "\(enabled.text)")
            try await gateway.appEnabledHasArrived(true)

            // An admin ends the user's sessions: the next challenge signs the client out, and the store is empty.
            let ended = try await HTTPCall.send(
                "DELETE", "\(gateway.gatewayURL)/admin/v1/apps/\(gateway.appID)/users/alice/sessions", token: gateway.bootstrap)
            try #require(ended.status == 200, "\(ended.text)")
            await #expect(throws: IdentityGatewayError.signedOut) { try await client.identityToken(forNonce: "ended") }
            #expect(await store.load() == nil)
        }
    }
}
