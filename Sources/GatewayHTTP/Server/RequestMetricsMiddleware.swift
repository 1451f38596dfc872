public import Hummingbird
import CoreMetrics
import GatewayCore
public import GatewayPluginKit
import Synchronization

/// `gateway_http_requests_total{route,status}` and the latency histogram by
/// route: the pattern of the route the request matched
/// (`/v1/apps/{app_id}/jwks.json`), or `unmatched`, so that paths a client
/// makes up cannot grow the metrics without bound.
///
/// The metric handles are made once per route and status and kept: making
/// them through the metrics factory on every request cost a lock, name and
/// label checks and allocations on the token path.
public struct RequestMetricsMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    /// A route's counter for one status, and its latency timer.
    struct Handles {
        let requests: Counter
        let duration: CoreMetrics.Timer
    }

    final class Handled: Sendable {
        let byRouteAndStatus = Mutex<[String: Handles]>([:])
    }

    private let handled = Handled()

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
        let route = "\(request.method.rawValue) \(pattern)"
        let key = "\(route) \(status)"
        return handled.byRouteAndStatus.withLock { handles in
            if let known = handles[key] { return known }
            let made = Handles(
                requests: Counter(label: "gateway_http_requests_total", dimensions: [("route", route), ("status", "\(status)")]),
                duration: CoreMetrics.Timer(label: "gateway_http_request_duration_seconds", dimensions: [("route", route)]))
            handles[key] = made
            return made
        }
    }
}
