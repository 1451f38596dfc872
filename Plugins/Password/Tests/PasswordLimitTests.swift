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

/// The password plugin's failures attacked with many connections over two
/// instances: what reached the hasher, and what got through.
@Suite struct PasswordLimitTests: ConcurrentAttack {
    @Test func wrongPasswordsReachTheHasherNoMoreThanTheLimitAllows() async throws {
        try await withTwoInstances(plugins: .passwordTests) { gateways in
            let app = try await gateways[0].createPasswordApp()
            let token = try await gateways[0].adminToken(.operator)
            try await gateways[0].putUser("victim", in: app, token: token, ["password": "correct horse battery"])

            // Right passwords at once: each attempt holds a unit only while it is checked, and gives it back.
            let right = try await statuses(on: gateways) { _ in
                passwordRequest(app, user: "victim", password: "correct horse battery")
            }
            #expect(count(right, 200) >= 10)
            #expect(count(right, 200) + count(right, 429) == Self.attempts)

            let wrong = try await statuses(on: gateways) { index in
                passwordRequest(app, user: "victim", password: "guess-\(index)")
            }
            // The default user_failures policy: 10 per 900 s. The successes above left it whole.
            #expect(count(wrong, 401) == 10)
            #expect(count(wrong, 429) == Self.attempts - 10)
            #expect(try await reasons(in: gateways[0])["bad_password"] == 10)

            // The window is spent: the right password waits too.
            let after = try await gateways[1].test {
                try await $0.postJSON(passwordRequest(app, user: "victim", password: "correct horse battery"))
            }
            #expect(after.status == .tooManyRequests)
        }
    }
}
