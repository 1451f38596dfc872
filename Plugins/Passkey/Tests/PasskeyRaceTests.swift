import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import PasskeyPlugin
import PasskeyTestSupport
import Testing

/// Single use on every replica at once: a passkey response sent many times
/// over two gateway instances on one database signs in once; assertions
/// that each carry their own challenge but the same counter sign in once.
@Suite struct PasskeyRaceTests: ConcurrentAttack {
    @Test func oneResponseSentManyTimesAtOnceOverTwoInstancesSignsInOnce() async throws {
        try await withTwoInstances(plugins: passkeyPlugins) { gateways in
            let (app, authenticator, handle) = try await Self.registered(on: gateways[0])
            let assertion = authenticator.assert(
                challenge: try await gateways[1].signInChallenge(app), rpID: TestGateway.rpID, origin: TestGateway.origin,
                userHandle: handle)
            let body = TestGateway.passkeyRequest(app, assertion)
            let statuses = try await statuses(on: gateways) { _ in body }
            #expect(count(statuses, 200) == 1, "\(statuses)")
            #expect(count(statuses, 401) == Self.attempts - 1, "\(statuses)")
            let reasons = try await reasons(in: gateways[0])
            #expect(reasons["passkey_challenge"] == Self.attempts - 1, "\(reasons)")
        }
    }

    /// Each assertion is good on its own (its own challenge, counter 7 over
    /// a stored 0); only the first to store its counter passes, however
    /// many read the stored counter before it.
    @Test func assertionsWithTheSameCounterAtOnceSignInOnce() async throws {
        try await withTwoInstances(plugins: passkeyPlugins) { gateways in
            let (app, authenticator, handle) = try await Self.registered(on: gateways[0])
            var bodies: [[String: any Sendable]] = []
            for index in 0..<Self.attempts {
                let assertion = authenticator.assert(
                    challenge: try await gateways[index % 2].signInChallenge(app), rpID: TestGateway.rpID,
                    origin: TestGateway.origin, userHandle: handle, signCount: 7)
                bodies.append(TestGateway.passkeyRequest(app, assertion))
            }
            let prepared = bodies
            let statuses = try await statuses(on: gateways) { prepared[$0] }
            #expect(count(statuses, 200) == 1, "\(statuses)")
            let reasons = try await reasons(in: gateways[0])
            #expect(reasons["passkey_counter"] == Self.attempts - 1, "\(reasons)")
        }
    }

    /// Alice's app with a passkey registered with her session.
    static func registered(on gateway: TestGateway) async throws -> (AppSettings, SoftwareAuthenticator, [UInt8]) {
        let app = try await gateway.createPasskeyApp()
        let session = try await gateway.aliceSession(app)
        let authenticator = SoftwareAuthenticator()
        let registered = try await gateway.register(authenticator, app, refreshToken: session)
        try #require(registered.status == .created, "\(registered.text)")
        return (app, authenticator, try await gateway.userHandle(of: session, app))
    }
}
