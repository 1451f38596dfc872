import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// The phone plugin's limits and single-use codes attacked with many
/// connections over two instances: what reached the verifier, what got through.
@Suite struct PhoneCodeLimitTests: ConcurrentAttack {
    @Test func wrongCodesForOneNumberReachTheVerifierNoMoreThanTheLimit() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await withTwoInstances(plugins: .phoneCodeTests) { gateways in
                let app = try await gateways[0].createPhoneApp(webhook: base)
                #expect(try await gateways[0].requestCode(app).status == .accepted)
                let code = try #require(webhook.requests.first?.sentCode)
                let wrong = code == "000000" ? "111111" : "000000"
                let statuses = try await statuses(on: gateways) { _ in
                    ["app_id": app.appID.description, "nonce": "n",
                     "credentials": ["type": "phone_code", "phone_number": ada, "code": wrong]]
                }
                // phone_failures: 10 per 900 s. The code died after its fifth wrong try.
                #expect(count(statuses, 401) == 10)
                #expect(count(statuses, 429) == Self.attempts - 10)
                let written = try await reasons(in: gateways[0])
                #expect(written["bad_code"] == 4)
                #expect(written["bad_code_exhausted"] == 1)
                #expect(written["no_live_code"] == 5)
            }
        }
    }

    @Test func aCodeDiesAfterFiveWrongTriesAndServesOnceWhateverTheConcurrency() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await withTwoInstances(plugins: .phoneCodeTests) { gateways in
                let roomy = ["phone_failures": RateLimitOverride(limit: 1000, periodSeconds: 900)]
                let guessed = try await gateways[0].createPhoneApp(webhook: base, rateLimits: roomy)
                #expect(try await gateways[0].requestCode(guessed).status == .accepted)
                let code = try #require(webhook.requests.last?.sentCode)
                let wrong = code == "000000" ? "111111" : "000000"
                let guesses = try await statuses(on: gateways) { _ in
                    ["app_id": guessed.appID.description, "nonce": "n",
                     "credentials": ["type": "phone_code", "phone_number": ada, "code": wrong]]
                }
                #expect(count(guesses, 401) == Self.attempts)
                let guessReasons = try await reasons(in: gateways[0])
                #expect(guessReasons["bad_code"] == 4)
                #expect(guessReasons["bad_code_exhausted"] == 1)
                #expect(guessReasons["no_live_code"] == Self.attempts - 5)
                // Dead: the right code no longer signs in.
                #expect(try await gateways[1].signIn(guessed, code: code).status == .unauthorized)

                let used = try await gateways[0].createPhoneApp(webhook: base, rateLimits: roomy)
                #expect(try await gateways[0].requestCode(used).status == .accepted)
                let fresh = try #require(webhook.requests.last?.sentCode)
                let signIns = try await statuses(on: gateways) { _ in
                    ["app_id": used.appID.description, "nonce": "n",
                     "credentials": ["type": "phone_code", "phone_number": ada, "code": fresh]]
                }
                #expect(count(signIns, 200) == 1)
                #expect(count(signIns, 401) == Self.attempts - 1)
                let issued = try await gateways[0].auditRows().filter { $0.event == "token.issued" }
                #expect(issued.count == 1)
            }
        }
    }

    @Test func codeSendsAreCountedExactlyPerNumberAndPerClient() async throws {
        try await withTwoInstances(plugins: .phoneCodeTests) { gateways in
            let expiry = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
            let tester = "+15005550006"
            let app = try await gateways[0].createPhoneApp([
                "test_numbers": .array([
                    .object(["phone_number": .string(tester), "code": .string("123456"), "expires_at": .string(expiry)])
                ])
            ])
            let sameNumber = try await statuses(on: gateways, paths: ["/v1/phone_codes"]) { _ in
                ["app_id": app.appID.description, "phone_number": tester]
            }
            // code_sends_number: 5 per hour, whatever the concurrency.
            #expect(count(sameNumber, 202) == 5)
            #expect(count(sameNumber, 429) == Self.attempts - 5)

            // code_sends_ip: 20 per hour for this client, over numbers nobody bound (answered alike, nothing sent).
            let other = try await gateways[0].createPhoneApp()
            let manyNumbers = try await statuses(on: gateways, paths: ["/v1/phone_codes"]) { index in
                ["app_id": other.appID.description, "phone_number": "+49151\(String(format: "%08d", index))"]
            }
            #expect(count(manyNumbers, 202) == 20)
            #expect(count(manyNumbers, 429) == Self.attempts - 20)
        }
    }

    /// Code requests and token requests pass one gate: made-up apps on
    /// either route spend the one budget of the deployment's `ip` policy,
    /// whichever instance answers, and the run leaves a row for each answer
    /// and for its first refusal only.
    @Test func codeAndTokenRequestsSpendOneClientBudget() async throws {
        var settings = RateLimitSettings()
        // A day-long window: the test cannot straddle its edge.
        settings.policies["ip"] = RateLimitPolicy.clientIP.with(limit: 20, periodSeconds: 86_400)
        try await withTwoInstances(plugins: .phoneCodeTests, rateLimits: settings) { gateways in
            let real = try await gateways[0].createPhoneApp()
            let paths = ["/v1/identity_tokens", "/v1/phone_codes"]
            let statuses = try await statuses(on: gateways, paths: paths) { index in
                index / 2 % 2 == 0
                    ? ["app_id": UUID().uuidString, "user_id": "ada", "nonce": "n"]
                    : ["app_id": UUID().uuidString, "phone_number": ada]
            }
            let written = try await reasons(in: gateways[0])
            #expect(count(statuses, 404) == 20, "\(statuses), rows: \(written)")
            #expect(count(statuses, 429) == Self.attempts - 20, "\(statuses), rows: \(written)")
            // Beside the row of binding ada's number: the answered ones, and only the first refusal of the run.
            #expect(written["unknown_app"] == 20)
            #expect(written["rate_limited"] == 1)
            #expect(written.values.reduce(0, +) == 22, "\(written)")
            // The budget is the client's, on either route and whichever app it names next.
            #expect(try await gateways[1].requestCode(real).status == .tooManyRequests)
            let token = try await gateways[0].test {
                try await $0.postJSON(["app_id": real.appID.description, "user_id": "ada", "nonce": "n"])
            }
            #expect(token.status == .tooManyRequests)
        }
    }

    /// `code_sends_number` counts codes sent: requests refused by the resend
    /// delay, and deliveries that failed, give their unit back, so a user
    /// tapping "resend" is not locked out for the hour.
    @Test func onlyCodesThatWentOutCountAsSends() async throws {
        try await FakeHTTPServer.with(statuses: [200, 400]) { base, webhook in
            try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                #expect(try await gateway.requestCode(app).status == .accepted)
                let early = try await statuses(on: [gateway], paths: ["/v1/phone_codes"]) { _ in
                    ["app_id": app.appID.description, "phone_number": ada]
                }
                #expect(count(early, 429) == Self.attempts)
                #expect(webhook.requests.count == 1)
                #expect(try await Self.sends(of: ada, in: gateway) == 1)
                // Another number whose delivery fails: nothing counted.
                let other = "+4915112345679"
                let token = try await gateway.adminToken(.operator)
                _ = try await gateway.admin(
                    .put, "/admin/v1/apps/\(app.appID)/phone_numbers/%2B4915112345679", token: token, json: ["user_id": "bea"])
                #expect(try await gateway.requestCode(app, number: other).status == .badGateway)
                #expect(try await Self.sends(of: other, in: gateway) == 0)
            }
        }
    }

    static func sends(of number: String, in gateway: TestGateway) async throws -> Int {
        let rows = try await gateway.client.query(
            "SELECT coalesce(sum(count), 0)::int8 FROM rate_limit_counters WHERE policy = 'code_sends_number' AND subject = \(number)",
            logger: TestDatabase.logger)
        for try await total in rows.decode(Int64.self) { return Int(total) }
        return 0
    }
}
