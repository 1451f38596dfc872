import GatewayCore
public import GatewayPluginKit
public import Hummingbird
public import HTTPTypes

/// Answers 405 with an `Allow` header when a request names a route's path
/// with a method the route does not serve (`GET /v1/identity_tokens`,
/// `DELETE /v1/apps/{app_id}/jwks.json`); paths no route has stay 404.
///
/// Add it to the router after every route: Hummingbird applies a middleware
/// only to the routes added after it, and to the not-found responder, which is
/// built from all of them. So it sees exactly the requests no route matched.
public struct MethodNotAllowedMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    private let routes: [(path: RouterPath, method: HTTPRequest.Method)]

    public init(routes: [(path: RouterPath, method: HTTPRequest.Method)]) {
        self.routes = routes
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let (pattern, allowed) = matches(forPath: request.uri.path)
        guard let pattern, !allowed.contains(request.method.rawValue) else {
            return try await next(request, context)
        }
        context.coreContext.endpointPath.value = pattern
        let list = allowed.joined(separator: ", ")
        let error = GatewayError(
            .methodNotAllowed, .methodNotAllowed, "This path accepts \(list), not \(request.method.rawValue).")
        throw HeaderedError(error, headers: [.allow: list])
    }

    /// The first route pattern matching `path` (`nil` if none does) and the
    /// methods of every route whose pattern matches it, sorted.
    func matches(forPath path: String) -> (pattern: String?, methods: [String]) {
        let segments = path.split(separator: "/")
        var pattern: String?
        var methods = Set<String>()
        for route in routes where Self.pattern(route.path, matches: segments) {
            pattern = pattern ?? route.path.description
            methods.insert(route.method.rawValue)
            // The router answers HEAD wherever it answers GET.
            if route.method == .get { methods.insert(HTTPRequest.Method.head.rawValue) }
        }
        return (pattern, methods.sorted())
    }

    private static func pattern(_ pattern: RouterPath, matches segments: [Substring]) -> Bool {
        guard pattern.count == segments.count else { return false }
        return zip(pattern, segments).allSatisfy { element, segment in element ~= segment }
    }
}
