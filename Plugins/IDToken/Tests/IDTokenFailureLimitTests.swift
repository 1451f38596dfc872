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
                let (app, audience) = try await Self.createApp(of: provider, on: gateways[0])
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

    /// Issue 56.1: requests that name a user with tokens that prove nothing
    /// (malformed, forged) spend nothing of that user's failure budget, in
    /// parallel on two instances: the user's own genuine token still signs
    /// in, with or without naming them.
    @Test func namingAUserWithoutProofSpendsNothingOfTheirs() async throws {
        try await TestProvider.with { provider in
            try await withTwoInstances(plugins: idTokenPlugins()) { gateways in
                let (app, audience) = try await Self.createApp(of: provider, on: gateways[0])
                let providerKeyID = try await provider.keyID()
                let nonce = "layer-nonce-\(UUID())"
                var worthless = (0..<6).map { "not.a.token\($0)" }
                for _ in 0..<6 {
                    worthless.append(try await provider.signed(
                        providerClaims(issuer: provider.base, audience: audience, subject: "victim", nonce: nonce),
                        key: "stranger", header: ["kid": providerKeyID]))
                }
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for (index, token) in worthless.enumerated() {
                        let gateway = gateways[index % gateways.count]
                        group.addTask {
                            Int(try await gateway.idTokenLogin(app, token: token, nonce: nonce, user: "corp:victim").status.code)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(count(statuses, 401) == 12, "\(statuses)")

                for (gateway, named) in [(gateways[0], "corp:victim"), (gateways[1], nil)] as [(TestGateway, String?)] {
                    let fresh = "layer-nonce-\(UUID())"
                    let signedIn = try await gateway.idTokenLogin(
                        app, token: try await provider.idToken(subject: "victim", nonce: fresh), nonce: fresh, user: named)
                    #expect(signedIn.status == .ok, "named \(named ?? "nobody"): \(text(signedIn))")
                }
            }
        }
    }

    /// An app taking the provider's tokens, with a failure limit of 3 a day
    /// and room for every request of a test from one address; and the audience its tokens are for.
    private static func createApp(of provider: TestProvider, on gateway: TestGateway) async throws -> (AppSettings, String) {
        let audience = try await provider.clientID("ios")
        let app = try await gateway.createIDTokenApp(
            [["name": "corp", "issuer": provider.base, "audiences": [audience]]],
            rateLimits: [
                "user_failures": RateLimitOverride(limit: 3, periodSeconds: 86_400),
                "ip": RateLimitOverride(limit: 1000, periodSeconds: 60),
            ])
        return (app, audience)
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
