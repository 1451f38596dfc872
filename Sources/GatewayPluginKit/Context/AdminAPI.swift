public import GatewayCore
public import HTTPTypes
public import Hummingbird
public import NIOCore

/// The admin API and token validation as an in-process responder: what the
/// console calls. A call goes through the same routes, admin-token
/// authentication, scope checks, input rules and audit rows as a REST
/// caller's, so the console never keeps a copy of a rule.
public struct AdminAPI: Sendable {
    let responder: RouterResponder<GatewayRequestContext>

    public init(responder: RouterResponder<GatewayRequestContext>) {
        self.responder = responder
    }

    /// Answers `method pathAndQuery` as the API would, with `token` as the
    /// bearer, within the request `context` serves (its request id ties the
    /// audit rows to it). An error is an answer (the API's JSON error), never a throw.
    public func call(
        _ method: HTTPRequest.Method, _ pathAndQuery: String, token: AdminTokenSecret?, body: ByteBuffer? = nil,
        contentType: String = "application/json", accept: String = "application/json",
        from context: GatewayRequestContext
    ) async -> Response {
        var head = HTTPRequest(method: method, scheme: nil, authority: nil, path: pathAndQuery)
        if let token { head.headerFields[.authorization] = "Bearer \(token.text)" }
        head.headerFields[.accept] = accept
        if let body {
            head.headerFields[.contentType] = contentType
            head.headerFields[.contentLength] = "\(body.readableBytes)"
        }
        let request = Request(head: head, body: RequestBody(buffer: body ?? ByteBuffer()))
        let inner = GatewayRequestContext(callingFrom: context)
        do {
            return try await responder.respond(to: request, context: inner)
        } catch {
            return ErrorResponder.response(for: error, requestID: context.requestID, logger: context.logger)
        }
    }
}
