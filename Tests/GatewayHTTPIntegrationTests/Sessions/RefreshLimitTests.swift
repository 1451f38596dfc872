import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// A refresh pays the client's `ip` and the `app` budgets like any token
/// request, and a refused one the client's `refresh_failures` too: a client
/// trying many tokens on two instances at once gets no more verdicts than
/// that limit, while a live token still refreshes.
@Suite struct RefreshLimitTests: ConcurrentAttack {
    @Test func aClientTryingManyTokensGetsAtMostItsFailureBudgetOfVerdicts() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSessionApp {
                $0.rateLimits["refresh_failures"] = RateLimitOverride(limit: 7, periodSeconds: 900)
            }
            let live = try #require(try await gateways[0].signIn(app).refreshToken)
            let statuses = try await statuses(on: gateways) { _ in
                [
                    "app_id": app.appID.uuid.uuidString, "nonce": "n",
                    "credentials": ["type": "refresh_token", "refresh_token": RefreshToken.first(of: UUID()).text],
                ]
            }
            #expect(count(statuses, 401) == 7, "\(statuses)")
            #expect(count(statuses, 429) == Self.attempts - 7, "\(statuses)")
            let rows = try await reasons(in: gateways[0])
            #expect(rows[RefreshVerdict.Reason.unknown] == 7)
            #expect(try await gateways[1].refresh(app, live).status == .ok, "a live token cannot have been guessed")
        }
    }

    @Test func refreshesCountAgainstTheClientAndTheApp() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSessionApp {
                $0.rateLimits = ["app": RateLimitOverride(limit: 4, periodSeconds: 3_600)]
                $0.rateLimitChanges = RateLimitChanges(setByOperator: ["app"])
            }
            var live = try #require(try await gateway.signIn(app).refreshToken)
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<5 {
                let answer = try await gateway.refresh(app, live)
                statuses.append(answer.status)
                if let next = answer.refreshToken { live = next }
            }
            // The sign-in took one of the four.
            #expect(statuses == [.ok, .ok, .ok, .tooManyRequests, .tooManyRequests])
            #expect(try await gateway.refresh(app, live).status == .tooManyRequests, "the token refused by the limit was not spent")
        }
    }
}
