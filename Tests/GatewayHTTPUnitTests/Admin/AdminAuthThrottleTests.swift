import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Requests that cost a database round trip before anyone is known are
/// limited per client address: admin requests with a bad token (console
/// sign-ins go through them too) and token validations. The limits are the
/// configuration's; here small, over ten minutes, so no window edge falls
/// inside a test however slow the machine.
@Suite struct AdminAuthThrottleTests {
    static let limit = 5

    static var settings: RateLimitSettings {
        var settings = RateLimitSettings()
        for policy in [RateLimitPolicy.adminAuthFailures, .validations] {
            settings.policies[policy.name] = policy.with(limit: limit, periodSeconds: 600)
        }
        return settings
    }

    @Test func badAdminTokensFromOneAddressStopReachingTheDatabaseAtTheLimit() async throws {
        try await MemoryGateway.with(rateLimits: Self.settings) { gateway in
            let good = try await gateway.adminToken(.operator)
            // A good token takes no unit: an operator's own traffic never locks the address.
            for _ in 0..<(3 * Self.limit) { #expect(try await gateway.admin(.get, "/admin/v1/me", token: good).status == .ok) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<(6 * Self.limit) {
                    group.addTask { try await gateway.admin(.get, "/admin/v1/me", token: AdminTokenSecret.generate().text).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            let refusedByDatabase = statuses.filter { $0 == .unauthorized }.count
            // A lookup the database could not answer (503) gives its unit back, like a good token.
            let unanswered = statuses.filter { $0 == .serviceUnavailable }.count
            #expect(refusedByDatabase <= Self.limit && refusedByDatabase + unanswered >= Self.limit, "\(statuses)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == statuses.count - refusedByDatabase - unanswered)
            let limited = try await gateway.admin(.get, "/admin/v1/me", token: good)
            #expect(limited.status == .tooManyRequests)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try jsonObject(limited)["error"] as? String == "rate_limited")
        }
    }

    @Test func validationsFromOneAddressStopAtTheLimit() async throws {
        try await MemoryGateway.with(rateLimits: Self.settings) { gateway in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<(2 * Self.limit) {
                let response = try await gateway.test {
                    try await $0.postJSON(["identity_token": "a.b.c"], to: "/v1/identity_tokens/validate")
                }
                statuses.append(response.status)
            }
            #expect(statuses == Array(repeating: .ok, count: Self.limit) + Array(repeating: .tooManyRequests, count: Self.limit))
        }
    }
}
