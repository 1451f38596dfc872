import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayOutbound
import Logging
import NIOCore
import Synchronization
import Testing

/// Making room in the pool of outbound clients never cancels a call in
/// flight, and one app churning through hosts only ever retires its own.
@Suite struct OutboundClientPoolTests {
    static let logger = Logger(label: "outbound-test")

    private func post(_ outbound: OutboundHTTP, _ url: String, for subject: String) async -> Result<Int, OutboundFailure> {
        do throws(OutboundFailure) {
            return .success(
                try await outbound.post(
                    URL(string: url)!, for: subject, headers: [], body: ByteBuffer(string: "{}"), timeout: .seconds(600),
                    maximumAnswerBytes: 1024, logger: Self.logger
                ).status)
        } catch {
            return .failure(error)
        }
    }

    /// Another app's calls to as many hosts as the pool holds, each a new
    /// client (port 1 on other loopback addresses: refused at once).
    private func churn(_ outbound: OutboundHTTP, hosts: Int, as subject: String) async {
        for index in 0..<hosts {
            _ = await post(outbound, "http://127.0.\(1 + index / 250).\(2 + index % 250):1/", for: subject)
        }
    }

    @Test func aClientRetiredWhileItsCallIsInFlightFinishesThatCall() async throws {
        let pool = OutboundClientPool(capacity: 4, perSubject: 4)
        let outbound = OutboundHTTP(addresses: OutboundAddressPolicy(allowsPrivateAddresses: true), clients: pool)
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let (releases, release) = AsyncStream.makeStream(of: Void.self)
        try await FakeHTTPServer.with(answering: { _ in
            arrived.yield()
            for await _ in releases { break }
            return FakeHTTPServer.Answer(body: #"{"valid":false}"#)
        }) { base, _ in
            let inFlight = Task { await post(outbound, "\(base)/verify", for: "victim") }
            for await _ in arrivals { break }
            // The victim's client is the least recently used of all: the churn retires it.
            await churn(outbound, hosts: 8, as: "churner")
            #expect(pool.counts.kept == 4)
            #expect(pool.counts.retiring == 1)
            release.yield()
            let result = await inFlight.value
            guard case .success(let status) = result else { Issue.record("the call in flight failed: \(result)"); return }
            #expect(status == 200)
            #expect(pool.counts.retiring == 0)
        }
    }

    @Test func oneAppCyclingItsURLThroughManyHostsRetiresOnlyItsOwnClients() async throws {
        // The process's own sizes: an app admin may point its webhook at 65 hosts with webhook:test.
        let pool = OutboundClientPool()
        let outbound = OutboundHTTP(addresses: OutboundAddressPolicy(allowsPrivateAddresses: true), clients: pool)
        try await FakeHTTPServer.with { base, _ in
            let before = await post(outbound, "\(base)/verify", for: "victim")
            #expect((try? before.get()) == 200, "\(before)")
            await churn(outbound, hosts: pool.capacity + 1, as: "churner")
            // The victim's client was kept; the churner holds no more than its share.
            #expect(pool.clientCount(for: "victim") == 1)
            #expect(pool.clientCount(for: "churner") == pool.perSubject)
            let after = await post(outbound, "\(base)/verify", for: "victim")
            #expect((try? after.get()) == 200, "\(after)")
        }
    }
}
