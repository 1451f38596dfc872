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
/// sign-ins go through them too) and token validations.
@Suite struct AdminAuthThrottleTests {
    static let failures = RateLimitPolicy.adminAuthFailures.limit
    static let validations = RateLimitPolicy.validations.limit

    @Test func badAdminTokensFromOneAddressStopReachingTheDatabaseAtTheLimit() async throws {
        try await TestGateway.with { gateway in
            let good = try await gateway.adminToken(.operator)
            // A good token takes no unit: an operator's own traffic never locks the address.
            for _ in 0..<(2 * Self.failures) { #expect(try await gateway.admin(.get, "/admin/v1/me", token: good).status == .ok) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for _ in 0..<(2 * Self.failures) {
                    group.addTask { try await gateway.admin(.get, "/admin/v1/me", token: AdminTokenSecret.generate().text).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            let refusedByDatabase = statuses.filter { $0 == .unauthorized }.count
            // A burst across a window's edge may pass one more (the sliding window's weighting).
            #expect(refusedByDatabase >= Self.failures && refusedByDatabase <= Self.failures + 1, "\(refusedByDatabase)")
            #expect(statuses.filter { $0 == .tooManyRequests }.count == statuses.count - refusedByDatabase)
            let limited = try await gateway.admin(.get, "/admin/v1/me", token: good)
            #expect(limited.status == .tooManyRequests)
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try jsonObject(limited)["error"] as? String == "rate_limited")
        }
    }

    @Test func validationsFromOneAddressStopAtTheLimit() async throws {
        try await TestGateway.with { gateway in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<(Self.validations + 10) {
                let response = try await gateway.test {
                    try await $0.postJSON(["identity_token": "a.b.c"], to: "/v1/identity_tokens/validate")
                }
                statuses.append(response.status)
            }
            let answered = statuses.filter { $0 == .ok }.count
            #expect(answered >= Self.validations && answered <= Self.validations + 1, "\(answered)")
            #expect(statuses.last == .tooManyRequests)
        }
    }
}
