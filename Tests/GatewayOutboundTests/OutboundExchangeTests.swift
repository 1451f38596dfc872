import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayOutbound
import Logging
import NIOCore
import Synchronization
import Testing

/// The caller's timeout bounds a whole call out, and a tenant's service or
/// name server cannot make one call (or another app's) wait past it.
@Suite struct OutboundExchangeTests {
    static let logger = Logger(label: "outbound-test")
    /// Far above any timeout used here, however loaded the machine: a call
    /// still waiting then was never bounded, and is given up on.
    static let hung = Duration.seconds(60)

    private func post(
        _ outbound: OutboundHTTP, _ url: String, for subject: String = "app-a", timeout: Duration = .milliseconds(300)
    ) async -> (Result<OutboundResponse, OutboundFailure>, Duration) {
        let started = ContinuousClock.now
        let call = Task { () async -> Result<OutboundResponse, OutboundFailure> in
            do throws(OutboundFailure) {
                return .success(
                    try await outbound.post(
                        URL(string: url)!, for: subject, headers: [], body: ByteBuffer(string: "{}"), timeout: timeout,
                        maximumAnswerBytes: 1024, logger: Self.logger))
            } catch {
                return .failure(error)
            }
        }
        // A call that is never bounded would keep the test waiting: it is cancelled once it has hung.
        let watchdog = Task {
            try await Task.sleep(for: Self.hung)
            call.cancel()
        }
        let result = await call.value
        watchdog.cancel()
        return (result, ContinuousClock.now - started)
    }

    @Test func anAnswerWhoseBodyNeverEndsTimesOutWithinTheCallersTimeout() async throws {
        let outbound = OutboundHTTP(addresses: OutboundAddressPolicy(allowsPrivateAddresses: true), clients: OutboundClientPool())
        let heads = [
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n",
            "HTTP/1.1 200 OK\r\nContent-Len",
        ]
        for head in heads {
            try await StallingHTTPServer.with(answering: head) { server in
                let (result, elapsed) = await post(outbound, "http://127.0.0.1:\(server.port)/verify")
                guard case .failure(let failure) = result else { Issue.record("answered: \(head)"); return }
                #expect(failure.kind == .timedOut, "\(head)")
                #expect(elapsed < Self.hung, "\(head): \(elapsed)")
            }
        }
    }

    @Test func aNameServerThatNeverAnswersCostsTheCallNoMoreThanItsTimeout() async throws {
        let policy = OutboundAddressPolicy(
            allowsPrivateAddresses: false,
            resolve: { _ in
                try await Task.sleep(for: .seconds(3600))
                return []
            })
        let outbound = OutboundHTTP(addresses: policy, clients: OutboundClientPool())
        let (result, elapsed) = await post(outbound, "https://never-answers.example/verify")
        guard case .failure(let failure) = result else { Issue.record("answered"); return }
        #expect(failure.kind == .timedOut)
        #expect(elapsed < Self.hung, "\(elapsed)")
    }

    @Test func lookupsOfOneHostAreAskedOnceAndAFailureIsRemembered() async throws {
        let asked = Mutex<[String]>([])
        let (release, opened) = AsyncStream.makeStream(of: Void.self)
        let lookups = HostLookups(resolve: { host in
            asked.withLock { $0.append(host) }
            for await _ in release { break }
            throw OutboundFailure(.noAnswer, "SERVFAIL")
        })
        try await withThrowingTaskGroup(of: OutboundFailure.Kind?.self) { group in
            for caller in 0..<20 {
                group.addTask {
                    do throws(OutboundFailure) {
                        _ = try await lookups.addresses(of: "slow.example", for: "app-\(caller % 4)")
                        return nil
                    } catch {
                        return error.kind
                    }
                }
            }
            // Every caller is waiting on the one question; then the name server fails it.
            while asked.withLock({ $0.count }) == 0 { await Task.yield() }
            opened.yield()
            let kinds = try await group.reduce(into: [OutboundFailure.Kind?]()) { $0.append($1) }
            #expect(kinds == Array(repeating: .noAnswer, count: 20))
        }
        // Asked again within the failure's lifetime: answered from memory.
        for _ in 0..<5 {
            await #expect(throws: OutboundFailure.self) { try await lookups.addresses(of: "slow.example", for: "app-9") }
        }
        #expect(asked.withLock { $0 } == ["slow.example"])
    }

    @Test func oneAppCannotHoldMoreThanItsShareOfNameLookups() async throws {
        let asked = Mutex<[String]>([])
        let lookups = HostLookups(
            resolve: { host in
                asked.withLock { $0.append(host) }
                if host.hasSuffix(".hangs.example") { try await Task.sleep(for: .seconds(3600)) }
                return [IPAddress("203.0.113.9")!]
            }, perSubject: 2)
        let hanging = [0, 1].map { index in
            Task { try await lookups.addresses(of: "\(index).hangs.example", for: "greedy") }
        }
        while asked.withLock({ $0.count }) < 2 { await Task.yield() }
        // The greedy app's third name is refused at once, without asking anyone...
        let refused = await #expect(throws: OutboundFailure.self) {
            try await lookups.addresses(of: "2.hangs.example", for: "greedy")
        }
        #expect(refused?.kind == .noAnswer)
        #expect(asked.withLock { $0.count } == 2)
        // ...while another app's lookups go on.
        #expect(try await lookups.addresses(of: "fine.example", for: "other") == [IPAddress("203.0.113.9")!])
        for task in hanging { task.cancel() }
    }
    /// Issue 56 (Low): four apps whose name servers are dead, two hosts each,
    /// once known as failing hold at most the failing hosts' share of the
    /// lookups (half the threads), whatever they retry, and the failures
    /// back off.
    @Test func failingHostsHoldAtMostTheirShareOfTheLookups() async throws {
        let hanging = Mutex(0)
        let started = AsyncStream.makeStream(of: Void.self)
        let firstCalls = Mutex<Set<String>>([])
        let lookups = HostLookups(
            resolve: { host in
                guard host.hasSuffix(".dead.example") else { return [IPAddress("203.0.113.9")!] }
                // Each dead host's first lookup fails at once; later ones hang, as a dead name server does.
                if firstCalls.withLock({ $0.insert(host).inserted }) { throw OutboundFailure(.noAnswer, "SERVFAIL") }
                hanging.withLock { $0 += 1 }
                started.continuation.yield()
                try await Task.sleep(for: .seconds(3600))
                return []
            }, failureLifetime: .milliseconds(1))
        let dead = (0..<4).flatMap { app in (0..<2).map { ("app-\(app)", "\(app)-\($0).dead.example") } }
        for (app, host) in dead {
            await #expect(throws: OutboundFailure.self) { try await lookups.addresses(of: host, for: app) }
        }
        try await Task.sleep(for: .milliseconds(20))  // past the first failures' lifetime of 1 ms
        // Every retry either takes one of the failing hosts' lookups (and hangs) or is refused at once.
        let refused = AsyncStream.makeStream(of: OutboundFailure.self)
        let retries = dead.map { app, host in
            Task {
                do throws(OutboundFailure) {
                    _ = try await lookups.addresses(of: host, for: app)
                } catch {
                    refused.continuation.yield(error)
                }
            }
        }
        var refusals: [OutboundFailure] = []
        for await refusal in refused.stream {
            refusals.append(refusal)
            if refusals.count == dead.count - HostLookups.failingShare { break }
        }
        var lookupsStarted = 0
        for await _ in started.stream {
            lookupsStarted += 1
            if lookupsStarted == HostLookups.failingShare { break }
        }
        // All eight retries are accounted for: the share hangs, the rest were refused without a lookup.
        #expect(hanging.withLock { $0 } == HostLookups.failingShare, "lookups of failing hosts in flight")
        #expect(refusals.allSatisfy { $0.reason.contains("other failing hosts hold the lookups") })
        #expect(try await lookups.addresses(of: "fine.example", for: "app-9") == [IPAddress("203.0.113.9")!])
        for retry in retries { retry.cancel() }
    }
}
