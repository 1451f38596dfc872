public import Hummingbird
import Foundation
public import GatewayCore
import HTTPTypes
import Logging
import CoreMetrics

/// Gives every request an id and every response, errors included, the
/// `x-request-id` header (a well-formed incoming id, from a load balancer,
/// is kept), and resolves the client's address under the trusted-proxy rules.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    private let trustedProxies: [CIDR]
    private let logsRequests: Bool

    /// - Parameter logsRequests: write one `info` access line a request.
    public init(trustedProxies: [CIDR] = [], logsRequests: Bool = true) {
        self.trustedProxies = trustedProxies
        self.logsRequests = logsRequests
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let requestID = request.headers[.requestID].flatMap(Self.acceptable) ?? Self.generate()
        context.requestID = requestID
        context.clientIP = ClientAddress.resolve(
            peer: context.peerAddress, forwardedFor: request.headers[values: .xForwardedFor],
            trustedProxies: trustedProxies)
        context.logger[metadataKey: "request_id"] = .string(requestID)
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = ErrorResponder.response(for: error, requestID: requestID, logger: context.logger)
        }
        response.headers[.requestID] = requestID
        Self.count(request, response, context, took: ContinuousClock.now - started)
        if logsRequests { Self.logAccess(request, response, context, took: ContinuousClock.now - started) }
        return response
    }

    /// `gateway_http_requests_total{route,status}` and the latency histogram
    /// by route: the pattern of the route the request matched
    /// (`/v1/apps/{app_id}/jwks.json`), or `unmatched`, so that paths a
    /// client makes up cannot grow the metrics without bound.
    private static func count(_ request: Request, _ response: Response, _ context: Context, took: Duration) {
        // Hummingbird's not-found responder names its endpoint "NotFound".
        let pattern = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        let route = "\(request.method.rawValue) \(pattern)"
        Counter(label: "gateway_http_requests_total", dimensions: [("route", route), ("status", "\(response.status.code)")])
            .increment()
        CoreMetrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: [("route", route)])
            .recordNanoseconds(took.nanoseconds)
    }

    /// One line a request: route, status, duration and the app, never a body.
    private static func logAccess(_ request: Request, _ response: Response, _ context: Context, took: Duration) {
        guard context.logger.logLevel <= .info else { return }
        var metadata: Logger.Metadata = [
            "route": "\(request.method.rawValue) \(request.uri.path)",
            "status": "\(response.status.code)",
            "duration_ms": "\(String(format: "%.3f", Double(took.nanoseconds) / 1e6))",
        ]
        if let appID = context.logFacts.appID { metadata["app_id"] = "\(appID)" }
        context.logger.info("request", metadata: metadata)
    }

    static func generate() -> String {
        UUID.random().lowercasedText
    }

    static func acceptable(_ candidate: String) -> String? {
        guard (1...128).contains(candidate.utf8.count),
            candidate.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
            })
        else { return nil }
        return candidate
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("x-request-id")!
    static let xForwardedFor = HTTPField.Name("x-forwarded-for")!
}
