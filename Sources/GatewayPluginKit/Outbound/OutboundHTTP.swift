import AsyncHTTPClient
public import Foundation
import GatewayCore
public import Logging
public import NIOCore
import NIOHTTP1
import Synchronization

/// An answer to a call out: its status and its body, whole.
public struct OutboundResponse: Sendable {
    public let status: Int
    public let body: ByteBuffer
}

/// Calls out of the gateway (an SMS sender, a tenant's webhook) under the
/// rules every plugin shares:
/// - only to addresses ``OutboundAddressPolicy`` allows, connecting to the
///   address it checked (TLS still verifies the URL's host name);
/// - no redirect followed: a 3xx is an answer like any other, so a public URL
///   cannot bounce the gateway onto its own network;
/// - an answer no larger than the caller accepts, and no slower than it waits;
/// - connections kept for the next call to the same host and address.
public struct OutboundHTTP: Sendable {
    public let addresses: OutboundAddressPolicy

    public init(addresses: OutboundAddressPolicy) {
        self.addresses = addresses
    }

    /// `POST`s `body` to `url` and reads the whole answer, or throws why not.
    public func post(
        _ url: URL, headers: [(name: String, value: String)], body: ByteBuffer, timeout: Duration,
        maximumAnswerBytes: Int, logger: Logger
    ) async throws(OutboundFailure) -> OutboundResponse {
        let address = try await addresses.destination(of: url)
        let client = OutboundClientPool.shared.client(host: url.host(percentEncoded: false) ?? "", address: address)
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(body)
        let deadline = NIODeadline.now() + .nanoseconds(Int64(timeout / .nanoseconds(1)))
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: deadline, logger: logger)
        } catch {
            throw Self.failure(error, logger: logger)
        }
        do {
            let answer = try await response.body.collect(upTo: maximumAnswerBytes)
            return OutboundResponse(status: Int(response.status.code), body: answer)
        } catch is NIOTooManyBytesError {
            throw OutboundFailure(.answerTooLarge, "the answer is larger than \(maximumAnswerBytes) bytes")
        } catch {
            throw Self.failure(error, logger: logger)
        }
    }

    private static func failure(_ error: any Error, logger: Logger) -> OutboundFailure {
        logger.debug("outbound call failed", metadata: ["error": "\(error)"])
        if let error = error as? HTTPClientError, error == .deadlineExceeded {
            return OutboundFailure(.timedOut, "no answer in time")
        }
        return OutboundFailure(.noAnswer, "no answer")
    }
}

/// HTTP clients kept for the process's life, one per host and checked
/// address, each pinned to its address (``OutboundAddressPolicy``) and
/// keeping its connections for reuse. At most ``capacity`` at once: the
/// least recently used is shut down to make room.
final class OutboundClientPool: Sendable {
    static let shared = OutboundClientPool()
    static let capacity = 64

    private struct Entry {
        let client: HTTPClient
        var lastUse: UInt64
    }

    private let state = Mutex<(clients: [String: Entry], uses: UInt64)>(([:], 0))

    func client(host: String, address: IPAddress?) -> HTTPClient {
        let key = "\(host)|\(address?.description ?? "")"
        let (client, evicted) = state.withLock { state -> (HTTPClient, HTTPClient?) in
            state.uses += 1
            if var entry = state.clients[key] {
                entry.lastUse = state.uses
                state.clients[key] = entry
                return (entry.client, nil)
            }
            var evicted: HTTPClient?
            if state.clients.count >= Self.capacity, let oldest = state.clients.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                evicted = state.clients.removeValue(forKey: oldest.key)?.client
            }
            let client = Self.makeClient(host: host, address: address)
            state.clients[key] = Entry(client: client, lastUse: state.uses)
            return (client, evicted)
        }
        if let evicted { Task { try? await evicted.shutdown() } }
        return client
    }

    private static func makeClient(host: String, address: IPAddress?) -> HTTPClient {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        // A refused connection is an answer now, not one to wait out to the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        if let address { configuration.dnsOverride = [host: address.description] }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
