import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// The gateway's own limits attacked with many connections over two instances
/// (the plugins' own are attacked in their tests). Each case counts what
/// reached the verifier (from the audit trail, whose reasons only a verifier
/// gives) and what got through.
@Suite struct ConcurrentLimitTests: ConcurrentAttack {
    @Test func staticUsersCountNoMoreFailuresThanTheLimit() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createApp()
            let wrong = try await statuses(on: gateways) { index in
                ["app_id": app.appID.description, "user_id": "alice", "nonce": "n",
                 "credentials": ["type": "static", "password": "guess-\(index)"]]
            }
            #expect(count(wrong, 401) == 10)
            #expect(count(wrong, 429) == Self.attempts - 10)
            #expect(try await reasons(in: gateways[0])["bad_password"] == 10)
            #expect(try await gateways[1].test { try await $0.postJSON(aliceRequest(app)) }.status == .tooManyRequests)
        }
    }

    @Test func madeUpAppsAndMalformedBodiesSpendTheClientsBudget() async throws {
        var settings = RateLimitSettings()
        // A day-long window: the test cannot straddle its edge.
        settings.policies["ip"] = RateLimitPolicy.clientIP.with(limit: 20, periodSeconds: 86_400)
        try await withTwoInstances(rateLimits: settings) { gateways in
            let real = try await gateways[0].createApp()
            let statuses = try await statuses(on: gateways) { index in
                index.isMultiple(of: 2)
                    ? ["app_id": UUID().uuidString, "user_id": "alice", "nonce": "n"]
                    : ["app_id": "not an app id", "nonce": "n"]
            }
            // The answered ones, and only the first refusal of the run.
            let written = try await reasons(in: gateways[0])
            #expect(count(statuses, 429) == Self.attempts - 20, "\(statuses), rows: \(written)")
            #expect(count(statuses, 404) + count(statuses, 400) == 20, "\(statuses), rows: \(written)")
            #expect(written["rate_limited"] == 1)
            #expect(written.values.reduce(0, +) == 21)
            // The budget is the client's, whichever app it names next.
            let response = try await gateways[1].test { try await $0.postJSON(aliceRequest(real)) }
            #expect(response.status == .tooManyRequests)
            #expect(response.headers[HTTPField.Name("RateLimit-Policy")!] == "\"ip\";q=20;w=86400")
        }
    }

}
