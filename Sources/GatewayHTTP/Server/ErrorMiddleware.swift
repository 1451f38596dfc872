public import GatewayPluginKit
public import Hummingbird

/// Answers whatever a route throws as the gateway's JSON error
/// (``ErrorResponder``), so the middlewares above it see every request end
/// in a response.
public struct ErrorMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return ErrorResponder.response(for: error, requestID: context.requestID, logger: context.logger)
        }
    }
}
