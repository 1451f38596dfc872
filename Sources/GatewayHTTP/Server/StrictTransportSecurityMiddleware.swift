public import HTTPTypes
public import Hummingbird

/// Adds `Strict-Transport-Security` to every answer that passes (place it
/// outside ``ErrorMiddleware``, so errors rendered as answers get it too): a
/// browser that has reached the gateway over TLS once keeps to TLS for a
/// year. On every route when the gateway serves TLS itself, and on the
/// console's when its cookie is `Secure` (behind a TLS-terminating proxy).
public struct StrictTransportSecurityMiddleware<Context: RequestContext>: RouterMiddleware {
    public static var field: HTTPField { HTTPField(name: HTTPField.Name("Strict-Transport-Security")!, value: "max-age=31536000") }

    public init() {}

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if response.headers[Self.field.name] == nil { response.headers.append(Self.field) }
        return response
    }
}
