public import GatewayCore
public import GatewayPluginKit
import HTTPTypes
public import Hummingbird
import Logging
public import ServiceContextModule
import Tracing

/// The server span of every request, the root of the gateway's part of a trace
/// (``Spans`` makes the children).
///
/// Hummingbird's `TracingMiddleware` is not used: it records `url.path` and
/// `url.query`, which on admin routes carry user ids and phone numbers, and it
/// believes a `traceparent` from any client. Here the span is named and
/// attributed by the route's template (`/v1/apps/{app_id}/users/{user_id}`),
/// and a `traceparent`/`tracestate` is read only from the peers given (the
/// trusted proxies, where `tracing.trust_incoming_parent` is on; none by
/// default); every other request starts a trace of its own, sampled by the
/// gateway's ratio. A request whose trace is not sampled
/// makes no child spans at all (``Spans`` sees no current context), so a low
/// ratio costs little more than the sampling decision.
public struct ServerSpanMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    private let parentPeers: [CIDR]
    private let traceID: @Sendable (ServiceContext) -> String?

    /// - Parameters:
    ///   - parentsFrom: the peers whose `traceparent` continues their trace; empty, none.
    ///   - traceID: the trace id a span's context carries, for the request's log lines.
    public init(parentsFrom peers: [CIDR], traceID: @escaping @Sendable (ServiceContext) -> String?) {
        self.parentPeers = peers
        self.traceID = traceID
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var parent = ServiceContext.topLevel
        if !parentPeers.isEmpty, ClientAddress.isTrustedProxy(peer: context.peerAddress, trustedProxies: parentPeers) {
            InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HeaderExtractor())
        }
        let method = request.method.rawValue
        let span = InstrumentationSystem.tracer.startSpan(method, context: parent, ofKind: .server)
        guard span.isRecording else {
            // Not sampled: no child spans, no trace id in the log, nothing sent on.
            span.end()
            return try await next(request, context)
        }
        span.attributes["http.request.method"] = method
        span.attributes["url.scheme"] = request.uri.scheme?.rawValue ?? "http"
        var context = context
        if let traceID = traceID(span.context) { context.logger[metadataKey: "trace_id"] = .string(traceID) }
        do {
            let response = try await ServiceContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            finish(span, request: request, context: context, status: response.status, requestID: response.headers[.requestID])
            // Ended once the answer is made: the gateway's bodies are written from memory.
            span.end()
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            finish(span, request: request, context: context, status: status, requestID: context.requestID)
            Spans.fail(span, error)
            span.end()
            throw error
        }
    }

    private func finish(
        _ span: any Span, request: Request, context: Context, status: HTTPResponse.Status, requestID: String?
    ) {
        if let route = context.endpointPath {
            span.operationName = "\(request.method.rawValue) \(route)"
            span.attributes["http.route"] = route
        }
        span.attributes["http.response.status_code"] = Int(status.code)
        if let requestID, !requestID.isEmpty { span.attributes["gateway.request_id"] = requestID }
        if let appID = context.logFacts.appID { span.attributes["gateway.app_id"] = appID.description }
        if status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
    }
}

private struct HeaderExtractor: Extractor {
    func extract(key name: String, from headers: HTTPFields) -> String? {
        guard let field = HTTPField.Name(name) else { return nil }
        return headers[field]
    }
}
