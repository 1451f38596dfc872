import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// A token request naming a profile its app does not issue is refused
/// before any credential is checked, and pays the client's budget like any
/// request answered before the app's limits: asking for profiles cannot buy
/// an attacker more tries.
@Suite struct TokenProfileRequestTests {
    static let limit = 5

    @Test func aProfileTheAppDoesNotIssueIsRefusedAndPaysTheClientsBudgetWhateverTheConcurrency() async throws {
        var settings = RateLimitSettings()
        settings.policies[RateLimitPolicy.clientIP.name] = RateLimitPolicy.clientIP.with(limit: Self.limit, periodSeconds: 600)
        try await TestGateway.with(rateLimits: settings) { gateway in
            let app = try await gateway.createApp()
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for index in 0..<(5 * Self.limit) {
                    var request = aliceRequest(app, nonce: "n-\(index)")
                    request["token_profile"] = "stream"
                    let body = request
                    group.addTask {
                        let response = try await gateway.test { try await $0.postJSON(body) }
                        return (response.status, try? errorBody(response)["error"] as? String)
                    }
                }
                return try await group.reduce(into: [(HTTPResponse.Status, String?)]()) { $0.append($1) }
            }
            let refusedForProfile = statuses.filter { $0.0 == .badRequest && $0.1 == "unsupported_token_profile" }.count
            let limited = statuses.filter { $0.0 == .tooManyRequests }.count
            #expect(refusedForProfile == Self.limit, "\(statuses)")
            #expect(limited == statuses.count - Self.limit, "\(statuses)")
            // The address's budget is spent: the app's own profile is refused too, credentials unchecked.
            let layer = try await gateway.test { try await $0.postJSON(aliceRequest(app)) }
            #expect(layer.status == .tooManyRequests)
            let rows = try await gateway.auditRows()
            #expect(rows.filter { $0.reason == "unsupported_token_profile" }.count == Self.limit)
            #expect(!rows.contains { $0.event == "token.issued" })
        }
    }
}
