import GatewayCore
import GatewayHTTPTestSupport
@testable import PasskeyPlugin
import GatewayTestSupport
import Testing

/// A passkey sign-in reads its passkey, and a refresh of its session the
/// user's passkeys; while the database fails over, those reads wait within
/// the replica's retry window (as a password's user lookup does) instead of
/// answering 503. Every client backend is terminated again and again while
/// the reads run: made once, some fail; made as the gateway makes them,
/// none does.
@Suite struct PasskeyReadsDuringFailoverTests {
    static let (workers, readsEach, cuts) = (8, 60, 8)

    @Test func readsWaitOutBackendsCutAgainAndAgain() async throws {
        try await TestGateway.with(plugins: passkeyPlugins) { gateway in
            let app = try await gateway.createApp(activeKey: false) { _ in }.appID
            let services = gateway.pluginServices
            for id: UInt8 in 1...2 {
                let row = PasskeyStoreContractTests.row(app, "passkey.registered")
                #expect(try await services.passkeys.add(PasskeyStoreContractTests.passkey(id, of: "alice"), in: app, recording: row) == .added)
            }
            func reads(_ store: any PasskeyStore) async throws -> BackendCuts.Outcome {
                try await BackendCuts.run(url: gateway.databaseURL, workers: Self.workers, statementsEach: Self.readsEach, cuts: Self.cuts) {
                    worker in
                    if worker.isMultiple(of: 2) {
                        let found = try await store.passkeys(of: "alice", in: app)
                        #expect(found.count == 2)
                    } else {
                        let found = try await store.passkey([1, 1], in: app)
                        #expect(found?.userID == "alice")
                    }
                }
            }
            let once = try await reads(services.retrying(.once(within: .seconds(20))).passkeys)
            let retried = try await reads(services.retrying(.waitingOutFailovers).passkeys)
            for outcome in [once, retried] {
                #expect(outcome.finishedWorkers == Self.workers, "a read never answered")
                #expect(outcome.terminated >= Self.cuts)
                #expect(outcome.notTransient == 0)
            }
            #expect(once.failed > 0, "the cuts failed no read made once: they test nothing")
            #expect(retried.failed == 0, "\(retried.failed) of \(retried.statements) reads failed")
            #expect(retried.answered == Self.workers * Self.readsEach)
        }
    }
}
