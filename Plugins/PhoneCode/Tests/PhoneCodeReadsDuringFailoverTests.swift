import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
@testable import PhoneCodePlugin
import GatewayTestSupport
import Testing

/// A phone-code sign-in reads its number's binding, and a refresh of its
/// session the user's numbers; while the database fails over, those reads
/// wait within the replica's retry window (as a password's user lookup
/// does) instead of answering 503. Every client backend is terminated again
/// and again while sign-ins with a test number (no code to spend: reads
/// only) and refreshes' checks run: made once, some fail; made as the
/// gateway makes them, none does.
@Suite struct PhoneCodeReadsDuringFailoverTests {
    static let (workers, checksEach, cuts) = (8, 60, 8)

    @Test func readsWaitOutBackendsCutAgainAndAgain() async throws {
        try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
            let app = try await gateway.createPhoneApp([
                "test_numbers": .array([.object(["phone_number": .string(ada), "code": .string("123456")])])
            ])
            let plugin = PhoneCodePlugin(codeKey: Array(repeating: 7, count: 32))
            let options = try #require(app.plugins["phone_code"])
            let signIn = CredentialAttempt(
                app: app, userID: "ada",
                credentials: Credentials(type: "phone_code", fields: ["phone_number": ada, "code": "123456"]),
                requestID: "failover", nonce: "n")
            func checks(_ retry: DatabaseRetry) async throws -> BackendCuts.Outcome {
                let verifier = try plugin.makeVerifier(for: app, options: options, services: gateway.pluginServices.retrying(retry))
                return try await BackendCuts.run(
                    url: gateway.databaseURL, workers: Self.workers, statementsEach: Self.checksEach, cuts: Self.cuts
                ) { worker in
                    if worker.isMultiple(of: 2) {
                        let result = try await verifier.verify(signIn)
                        guard case .verified(let identity) = result, identity.userID == "ada" else {
                            Issue.record("ada's sign-in: \(result)")
                            return
                        }
                    } else {
                        let lapse = try await verifier.lapse(of: VerifiedIdentity(userID: "ada"), in: app)
                        #expect(lapse == nil)
                    }
                }
            }
            let once = try await checks(.once(within: .seconds(20)))
            let retried = try await checks(.waitingOutFailovers)
            for outcome in [once, retried] {
                #expect(outcome.finishedWorkers == Self.workers, "a check never answered")
                #expect(outcome.terminated >= Self.cuts)
                #expect(outcome.notTransient == 0)
            }
            #expect(once.failed > 0, "the cuts failed no check made once: they test nothing")
            #expect(retried.failed == 0, "\(retried.failed) of \(retried.statements) checks failed")
            #expect(retried.answered == Self.workers * Self.checksEach)
        }
    }
}
