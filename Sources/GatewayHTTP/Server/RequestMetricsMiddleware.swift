public import Hummingbird
import CoreMetrics
import GatewayCore
import HTTPTypes
public import GatewayPluginKit

/// `gateway_http_requests_total{route,status}` and the latency histogram by
/// route: the pattern of the route the request matched
/// (`/v1/apps/{app_id}/jwks.json`), or `unmatched`, so that paths a client
/// makes up cannot grow the metrics without bound.
///
/// The metric handles are made once per route and status and kept
/// (``MetricHandles``).
public struct RequestMetricsMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    /// A route's counter for one status, and its latency timer.
    struct Handles {
        let requests: Counter
        let duration: CoreMetrics.Timer
    }

    /// The parts of the route label apart, so finding a kept handle builds no string.
    struct Labels: Hashable {
        let method: HTTPRequest.Method
        let pattern: String
        let status: Int
    }

    private let handles = MetricHandles<Labels, Handles> { labels in
        let route = "\(labels.method.rawValue) \(labels.pattern)"
        return Handles(
            requests: Counter(label: "gateway_http_requests_total", dimensions: [("route", route), ("status", "\(labels.status)")]),
            duration: CoreMetrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: [("route", route)]))
    }

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        let handles = self.handles(for: request, context: context, status: response.status.code)
        handles.requests.increment()
        handles.duration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
        return response
    }

    private func handles(for request: Request, context: Context, status: Int) -> Handles {
        // Hummingbird's not-found responder names its endpoint "NotFound".
        let pattern = context.endpointPath.flatMap { $0 == "NotFound" ? nil : $0 } ?? "unmatched"
        return handles[Labels(method: request.method, pattern: pattern, status: status)]
    }
}
