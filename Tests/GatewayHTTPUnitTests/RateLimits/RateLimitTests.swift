import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Limits as a client meets them: 429 with the standard headers, whatever the
/// credential, and audited.
@Suite struct RateLimitTests {
    func wrongPassword(_ app: AppSettings, user: String = "alice") -> [String: any Sendable] {
        ["app_id": app.appID.description, "user_id": user, "nonce": "n", "credentials": ["type": "static", "password": "guess"]]
    }

    @Test func failedAttemptsPerUserAreCappedEvenForTheRightPasswordAfterwards() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp {
                $0.rateLimits = ["user_failures": RateLimitOverride(limit: 3, periodSeconds: 900)]
                $0.plugins = [
                    "static": .object(["users": .array([
                        .object(["user_id": .string("alice"), "password": .string("wonderland")]),
                        .object(["user_id": .string("bob"), "password": .string("builder")]),
                    ])])
                ]
            }
            var lastWait = 0
            var lastSent = ContinuousClock.now
            for attempt in 1...3 {
                lastSent = ContinuousClock.now
                let response = try await gateway.test { try await $0.postJSON(wrongPassword(app)) }
                #expect(response.status == .unauthorized, "attempt \(attempt)")
                #expect(response.headers[HTTPField.Name("RateLimit-Policy")!]?.contains("\"user_failures\";q=3;w=900") == true)
                // r is what is left after this attempt; t is 0 while some is, then the wait for room.
                let header = response.headers[HTTPField.Name("RateLimit")!] ?? ""
                #expect(header.hasPrefix("\"user_failures\";r=\(3 - attempt);t="), "\(header)")
                lastWait = Int(header.split(separator: "t=").last ?? "") ?? -1
                #expect((lastWait == 0) == (attempt < 3), "\(header)")
            }
            // The fourth attempt is refused before the credential is checked: the right password does not help.
            let limited = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            let elapsed = Int((ContinuousClock.now - lastSent).components.seconds)
            #expect(limited.status == .tooManyRequests)
            #expect(try errorBody(limited)["error"] as? String == "rate_limited")
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            // A full window decays into the next one: the wait can reach two periods.
            #expect(retryAfter > 0 && retryAfter <= 1800)
            // What the last allowed attempt announced is what the refusal says, less the time that passed.
            #expect(retryAfter <= lastWait + 1 && retryAfter >= lastWait - elapsed - 1, "\(retryAfter) vs \(lastWait), \(elapsed) s later")
            #expect(limited.headers[HTTPField.Name("RateLimit")!]?.hasPrefix("\"user_failures\";r=0;t=") == true)

            // Another user of the same app is not affected.
            let bob = try await gateway.test {
                try await $0.postJSON(["app_id": app.appID.description, "user_id": "bob", "nonce": "n", "credentials": ["type": "static", "password": "builder"]])
            }
            #expect(bob.status == .ok)
            #expect(bob.headers[HTTPField.Name("RateLimit")!] != nil)

            let rows = try await gateway.auditRows()
            #expect(rows.map(\.reason) == ["bad_password", "bad_password", "bad_password", "rate_limited", nil])
            #expect(rows[3].text.contains("user_failures"))
        }
    }

    @Test func requestsPerClientAddressAreCapped() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp { $0.rateLimits = ["ip": RateLimitOverride(limit: 5, periodSeconds: 60)] }
            var statuses: [Int] = []
            for _ in 0..<7 {
                statuses.append(try await gateway.test { try await $0.postJSON(aliceRequest(app)) }.status.code)
            }
            #expect(statuses == [200, 200, 200, 200, 200, 429, 429])
            // Other apps keep their own counters.
            let other = try await gateway.createApp()
            #expect(try await gateway.test { try await $0.postJSON(aliceRequest(other)) }.status == .ok)
        }
    }

    /// An app not in memory yet costs its client's `ip` count before the lookup; the answer's headers
    /// still name every policy, as they do once the app is cached.
    @Test func theHeadersNameTheSamePoliciesWhetherOrNotTheAppWasInMemory() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            gateway.tenants.invalidate(app.appID)
            var policies: [String?] = []
            for _ in 0..<2 {
                let response = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
                #expect(response.status == .ok)
                policies.append(response.headers[HTTPField.Name("RateLimit-Policy")!])
            }
            #expect(policies[0] == policies[1])
            #expect(policies[0] == #""app";q=30000;w=60, "ip";q=300;w=60, "user_failures";q=10;w=900"#)
        }
    }

    @Test func turnedOffThereAreNoLimitsAndNoHeaders() async throws {
        try await MemoryGateway.with(rateLimits: RateLimitSettings(isEnabled: false)) { gateway in
            let app = try await gateway.createApp { $0.rateLimits = ["ip": RateLimitOverride(limit: 1, periodSeconds: 60)] }
            for _ in 0..<3 {
                let response = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
                #expect(response.status == .ok)
                #expect(response.headers[HTTPField.Name("RateLimit")!] == nil)
            }
        }
    }

    @Test func appOverridesAreSetThroughTheAdminAPI() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            let token = try await gateway.adminToken(.operator)
            let set = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID)", token: token,
                json: ["rate_limits": ["user_failures": ["limit": 5, "period_seconds": 300]]])
            #expect(set.status == .ok)
            let limits = try jsonObject(set)["rate_limits"] as? [String: [String: Int]]
            #expect(limits == ["user_failures": ["limit": 5, "period_seconds": 300]])
            for (body, message) in [
                (["rate_limits": ["sms": ["limit": 5, "period_seconds": 300]]], "rate_limits.sms is not a rate-limit policy"),
                (["rate_limits": ["ip": ["limit": 0, "period_seconds": 300]]], "rate_limits.ip.limit must be a whole number from 1 to 1000000."),
                (["rate_limits": ["ip": ["limit": 5]]], "rate_limits.ip.period_seconds is required."),
            ] as [([String: any Sendable], String)] {
                let response = try await gateway.admin(.patch, "/admin/v1/apps/\(app.appID)", token: token, json: body)
                #expect(response.status == .badRequest)
                #expect((try jsonObject(response)["message"] as? String)?.hasPrefix(message) == true)
            }
        }
    }
}

/// An IPv6 client holds a whole /64: its limits count the range, not each address.
@Suite struct IPv6ClientRangeTests {
    @Test func addressesAreCountedByTheirConfiguredRange() {
        let settings = RateLimitSettings(ipv6PrefixLength: 64)
        #expect(settings.subject(forClient: "2001:db8:1:2:3:4:5:6") == "2001:db8:1:2:0:0:0:0/64")
        #expect(settings.subject(forClient: "2001:db8:1:2::ffff") == "2001:db8:1:2:0:0:0:0/64")
        #expect(settings.subject(forClient: "203.0.113.9") == "203.0.113.9")
        #expect(settings.subject(forClient: "::ffff:203.0.113.9") == "::ffff:203.0.113.9", "IPv4-mapped stays the IPv4 client")
        #expect(RateLimitSettings(ipv6PrefixLength: 56).subject(forClient: "2001:db8:1:2ff::1") == "2001:db8:1:200:0:0:0:0/56")
        #expect(RateLimitSettings(ipv6PrefixLength: 128).subject(forClient: "2001:db8::1") == "2001:db8::1")
    }

    @Test func aClientCannotEscapeItsLimitByRotatingAddressesInItsRange() async throws {
        var settings = RateLimitSettings(trustedProxies: [CIDR("127.0.0.1/32")!])
        settings.policies["ip"] = RateLimitPolicy.clientIP.with(limit: 3, periodSeconds: 86_400)
        try await MemoryGateway.with(rateLimits: settings) { gateway in
            let app = try await gateway.createApp()
            var statuses: [Int] = []
            for address in ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:aaaa::3", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:3::1"] {
                let response = try await gateway.application.test(.live) { client in
                    try await client.postJSON(aliceRequest(app), headers: [HTTPField.Name("x-forwarded-for")!: address])
                }
                statuses.append(Int(response.status.code))
            }
            // Three from the /64, then refused; the next /64 is another client.
            #expect(statuses == [200, 200, 200, 429, 200])
            let refused = try await gateway.auditRows().filter { $0.reason == "rate_limited" }
            #expect(refused.count == 1)
            #expect(refused.first?.text.contains("2001:db8:1:2:0:0:0:0/64") == true)
        }
    }
}

/// A malformed request spends the client's `ip` budget, and its 400 says so.
@Suite struct MalformedRequestLimitTests {
    @Test func aBadRequestCarriesTheIPPolicysHeadersAlone() async throws {
        try await MemoryGateway.with { gateway in
            let response = try await gateway.test { try await $0.post(contentType: "application/json", body: "{") }
            #expect(response.status == .badRequest)
            #expect(response.headers[HTTPField.Name("RateLimit-Policy")!] == "\"ip\";q=300;w=60")
            #expect(response.headers[HTTPField.Name("RateLimit")!] == "\"ip\";r=299;t=0")
        }
    }
}
