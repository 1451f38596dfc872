import AsyncHTTPClient
public import Foundation
import GatewayCore
public import Logging
public import NIOCore
import NIOHTTP1
import Tracing

/// An answer to a call out: its status, its headers and its body, whole.
public struct OutboundResponse: Sendable {
    public let status: Int
    /// By lowercase name; a header sent several times is its values joined by ", ".
    public let headers: [String: String]
    public let body: ByteBuffer
}

/// Calls out of the gateway (an SMS sender, a tenant's webhook, an identity provider's keys) under the
/// rules every plugin shares:
/// - only to addresses ``OutboundAddressPolicy`` allows, connecting to the
///   address it checked (TLS still verifies the URL's host name);
/// - no redirect followed: a 3xx is an answer like any other, so a public URL
///   cannot bounce the gateway onto its own network;
/// - an answer no larger than the caller accepts, and the caller's timeout
///   bounds the whole exchange: name lookup, connection, head and body;
/// - connections kept for the next call of the same app to the same host
///   (``OutboundClientPool``).
public struct OutboundHTTP: Sendable {
    public let addresses: OutboundAddressPolicy
    private let clients: OutboundClientPool

    public init(addresses: OutboundAddressPolicy, clients: OutboundClientPool = .shared) {
        self.addresses = addresses
        self.clients = clients
    }

    /// `POST`s `body` to `url` for `subject` (the app the call is made for)
    /// and reads the whole answer within `timeout`, or throws why not.
    public func post(
        _ url: URL, for subject: String, headers: [(name: String, value: String)], body: ByteBuffer, timeout: Duration,
        maximumAnswerBytes: Int, logger: Logger
    ) async throws(OutboundFailure) -> OutboundResponse {
        try await send(
            .POST, url, for: subject, headers: headers, body: body, timeout: timeout, maximumAnswerBytes: maximumAnswerBytes,
            logger: logger)
    }

    /// `GET`s `url` for `subject` and reads the whole answer within `timeout`, or throws why not.
    public func get(
        _ url: URL, for subject: String, headers: [(name: String, value: String)] = [], timeout: Duration,
        maximumAnswerBytes: Int, logger: Logger
    ) async throws(OutboundFailure) -> OutboundResponse {
        try await send(
            .GET, url, for: subject, headers: headers, body: nil, timeout: timeout, maximumAnswerBytes: maximumAnswerBytes,
            logger: logger)
    }

    /// In a traced request the call is an HTTP client span (method, host,
    /// port, status; never the URL's path or query, which may hold a
    /// tenant's secret), and the request carries its `traceparent` so that
    /// the service called can join the trace.
    private func send(
        _ method: HTTPMethod, _ url: URL, for subject: String, headers: [(name: String, value: String)], body: ByteBuffer?,
        timeout: Duration, maximumAnswerBytes: Int, logger: Logger
    ) async throws(OutboundFailure) -> OutboundResponse {
        var request = Self.request(method, url, headers: headers, body: body)
        let span = Spans.start(method.rawValue, kind: .client, attributes: Self.spanAttributes(of: url, method: method))
        defer { span?.end() }
        if let span {
            InstrumentationSystem.instrument.inject(span.context, into: &request.headers, using: HeaderInjector())
        }
        do {
            let response = try await exchange(request, url: url, for: subject, timeout: timeout, maximumAnswerBytes: maximumAnswerBytes, logger: logger)
            span?.attributes["http.response.status_code"] = response.status
            if response.status >= 500 { span?.setStatus(SpanStatus(code: .error)) }
            return response
        } catch {
            span?.attributes["error.type"] = error.kind.rawValue
            span?.setStatus(SpanStatus(code: .error))
            throw error
        }
    }

    private func exchange(
        _ request: HTTPClientRequest, url: URL, for subject: String, timeout: Duration, maximumAnswerBytes: Int, logger: Logger
    ) async throws(OutboundFailure) -> OutboundResponse {
        let deadline = NIODeadline.now() + .nanoseconds(timeout.nanoseconds)
        let addresses = self.addresses
        let clients = self.clients
        do {
            return try await withTimeout(timeout) { () async throws(OutboundFailure) -> OutboundResponse in
                let address = try await addresses.destination(of: url, for: subject)
                let host = url.host(percentEncoded: false) ?? ""
                return try await clients.withClient(for: subject, host: host, address: address) { client throws(OutboundFailure) in
                    try await Self.exchange(request, on: client, deadline: deadline, maximumAnswerBytes: maximumAnswerBytes, logger: logger)
                }
            }
        } catch let failure as OutboundFailure {
            throw failure
        } catch {
            throw Self.failure(error, logger: logger)
        }
    }

    private static func spanAttributes(of url: URL, method: HTTPMethod) -> SpanAttributes {
        var attributes: SpanAttributes = ["http.request.method": .string(method.rawValue)]
        if let host = url.host(percentEncoded: false) { attributes["server.address"] = host }
        if let port = url.port ?? (url.scheme == "https" ? 443 : url.scheme == "http" ? 80 : nil) {
            attributes["server.port"] = port
        }
        if let scheme = url.scheme { attributes["url.scheme"] = scheme }
        return attributes
    }

    private static func request(
        _ method: HTTPMethod, _ url: URL, headers: [(name: String, value: String)], body: ByteBuffer?
    ) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(body) }
        return request
    }

    private static func exchange(
        _ request: HTTPClientRequest, on client: HTTPClient, deadline: NIODeadline, maximumAnswerBytes: Int, logger: Logger
    ) async throws(OutboundFailure) -> OutboundResponse {
        do {
            let response = try await client.execute(request, deadline: deadline, logger: logger)
            let answer = try await response.body.collect(upTo: maximumAnswerBytes)
            var headers: [String: String] = [:]
            for header in response.headers {
                let name = header.name.lowercased()
                headers[name] = headers[name].map { "\($0), \(header.value)" } ?? header.value
            }
            return OutboundResponse(status: Int(response.status.code), headers: headers, body: answer)
        } catch is NIOTooManyBytesError {
            throw OutboundFailure(.answerTooLarge, "the answer is larger than \(maximumAnswerBytes) bytes")
        } catch {
            throw failure(error, logger: logger)
        }
    }

    private static func failure(_ error: any Error, logger: Logger) -> OutboundFailure {
        logger.debug("outbound call failed", metadata: ["error": "\(error)"])
        if error is TimeoutError { return OutboundFailure(.timedOut, "no answer in time") }
        if let error = error as? HTTPClientError, error == .deadlineExceeded {
            return OutboundFailure(.timedOut, "no answer in time")
        }
        return OutboundFailure(.noAnswer, "no answer")
    }
}

private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: key, value: value)
    }
}
