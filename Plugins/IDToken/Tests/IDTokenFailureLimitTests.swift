import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// The user failure limit on ID tokens sent without a `user_id`: the user is
/// the one a token's `sub` makes, known only once its signature holds. Its
/// failures from then on count against that user, in parallel and on two
/// instances; a forged token naming a user spends nothing of theirs.
@Suite struct IDTokenFailureLimitTests: ConcurrentAttack {
    @Test func failuresCountAgainstTheSubjectOnceItsSignatureHolds() async throws {
        try await TestProvider.with { provider in
            try await withTwoInstances(plugins: idTokenPlugins()) { gateways in
                let audience = try await provider.clientID("ios")
                let app = try await gateways[0].createIDTokenApp(
                    [["name": "corp", "issuer": provider.base, "audiences": [audience]]],
                    rateLimits: [
                        "user_failures": RateLimitOverride(limit: 3, periodSeconds: 86_400),
                        "ip": RateLimitOverride(limit: 1000, periodSeconds: 60),
                    ])
                let providerKeyID = try await provider.keyID()

                // Ada's genuine tokens, each sent under a nonce it was not issued for, all at once.
                var wrongNonce: [String] = []
                for index in 0..<12 { wrongNonce.append(try await provider.idToken(subject: "ada", nonce: "issued-\(index)")) }
                let adaStatuses = try await logins(wrongNonce, nonce: "another-nonce", app: app, on: gateways)
                #expect(count(adaStatuses, 401) == 3, "\(adaStatuses)")
                #expect(count(adaStatuses, 429) == 9, "\(adaStatuses)")
                let rows = try await gateways[0].auditRows()
                #expect(rows.filter { $0.reason == "id_token_nonce" }.count == 3)

                // Her next token is genuine and right, and still refused: she is over the limit.
                let nonce = "layer-nonce-\(UUID())"
                let locked = try await gateways[1].idTokenLogin(
                    app, token: try await provider.idToken(subject: "ada", nonce: nonce), nonce: nonce)
                #expect(locked.status == .tooManyRequests, "\(text(locked))")
                #expect(identityToken(in: locked) == nil)
                let refusal = try await gateways[0].auditRowsOnceWritten(
                    requestID: try #require(locked.headers[HTTPField.Name("x-request-id")!]), event: "token.denied")
                #expect(refusal.first?.text.contains("user_failures") == true, "\(refusal.map(\.text))")

                // Forgeries naming Grace (a stranger's key under the provider's kid) spend nothing of hers.
                var forged: [String] = []
                for _ in 0..<12 {
                    forged.append(try await provider.signed(
                        providerClaims(issuer: provider.base, audience: audience, subject: "grace", nonce: nonce),
                        key: "stranger", header: ["kid": providerKeyID]))
                }
                let forgedStatuses = try await logins(forged, nonce: nonce, app: app, on: gateways)
                #expect(count(forgedStatuses, 401) == 12, "\(forgedStatuses)")
                for user in ["grace", "bob"] {
                    let fresh = "layer-nonce-\(UUID())"
                    let signedIn = try await gateways[0].idTokenLogin(
                        app, token: try await provider.idToken(subject: user, nonce: fresh), nonce: fresh)
                    #expect(signedIn.status == .ok, "\(user): \(text(signedIn))")
                }
            }
        }
    }

    /// Sends each token at once, alternating between the instances; their statuses.
    private func logins(_ tokens: [String], nonce: String, app: AppSettings, on gateways: [TestGateway]) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, token) in tokens.enumerated() {
                let gateway = gateways[index % gateways.count]
                group.addTask { Int(try await gateway.idTokenLogin(app, token: token, nonce: nonce).status.code) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}
