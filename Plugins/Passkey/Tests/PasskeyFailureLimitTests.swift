import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import HummingbirdTesting
import HTTPTypes
import GatewayRuntime
import GatewayTestSupport
import Testing

/// Issue 76.5: failures of requests that only name a user (wrong passwords
/// sent under their id, in parallel on two instances) lock that user's
/// password, never their passkey, which proves who they are: the passkey's
/// `user_failures` are counted apart. The review's attack was eleven wrong
/// passwords naming dave, then dave's own passkey: 429.
@Suite struct PasskeyFailureLimitTests: ConcurrentAttack {
    @Test func wrongPasswordsUnderAUsersIDLeaveTheirPasskeyWorking() async throws {
        try await withTwoInstances(plugins: PasskeyDirectoryTests.directoryPlugins) { gateways in
            let app = try await gateways[0].createApp(activeKey: true) { app in
                app.credentialTypes = ["password", "passkey"]
                app.sessions = SessionSettings()
                app.plugins = [
                    "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
                    "passkey": .object(["rp_id": .string(TestGateway.rpID)]),
                ]
                // The deployment's user_failures (10 in 15 minutes) stands; the address may send them all.
                app.rateLimits = ["ip": RateLimitOverride(limit: 100_000, periodSeconds: 60)]
            }
            let dave = try await PasskeyDirectoryTests.directoryUserWithAPasskey("dave", app, gateways[0])
            let wrong: [String: any Sendable] = [
                "app_id": app.appID.uuid.uuidString, "user_id": "dave", "nonce": "n",
                "credentials": ["type": "password", "password": "not his password"],
            ]
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<24 {
                    group.addTask { Int(try await gateways[index % 2].post(wrong, to: "/v1/identity_tokens").status.code) }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(count(statuses, 401) == 10, "the limit holds for the password: \(statuses.sorted())")
            #expect(count(statuses, 429) == 14, "\(statuses.sorted())")
            let right = try await gateways[1].post(
                ["app_id": app.appID.uuid.uuidString, "user_id": "dave", "nonce": "n",
                 "credentials": ["type": "password", "password": "analytical engine"]], to: "/v1/identity_tokens")
            #expect(right.status == .tooManyRequests, "dave's password is locked, as before: \(right.text)")

            let signedIn = try await dave.signIn(1)
            #expect(signedIn.status == .ok && signedIn.json["identity_token"] is String, "\(signedIn.text)")
        }
    }
}
