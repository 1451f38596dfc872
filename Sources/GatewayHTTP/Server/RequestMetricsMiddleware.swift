public import Hummingbird
import CoreMetrics
import GatewayCore
public import GatewayPluginKit

/// `gateway_http_requests_total{route,status}` and the latency histogram by
/// route: the pattern of the route the request matched
/// (`/v1/apps/{app_id}/jwks.json`), or `unmatched`, so that paths a client
/// makes up cannot grow the metrics without bound.
public struct RequestMetricsMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        // Hummingbird's not-found responder names its endpoint "NotFound".
        let pattern = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        let route = "\(request.method.rawValue) \(pattern)"
        Counter(label: "gateway_http_requests_total", dimensions: [("route", route), ("status", "\(response.status.code)")])
            .increment()
        CoreMetrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: [("route", route)])
            .recordNanoseconds((ContinuousClock.now - started).nanoseconds)
        return response
    }
}
