import Foundation
public import Hummingbird
import GatewayCore
public import GatewayPluginKit
import Logging

/// One `info` line a request: route, status, duration and the app, never a body.
public struct AccessLogMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let response = try await next(request, context)
        guard context.logger.logLevel <= .info else { return response }
        var metadata: Logger.Metadata = [
            "route": "\(request.method.rawValue) \(request.uri.path)",
            "status": "\(response.status.code)",
            "duration_ms": "\(String(format: "%.3f", Double((ContinuousClock.now - started).nanoseconds) / 1e6))",
        ]
        if let appID = context.logFacts.appID { metadata["app_id"] = "\(appID)" }
        context.logger.info("request", metadata: metadata)
        return response
    }
}
