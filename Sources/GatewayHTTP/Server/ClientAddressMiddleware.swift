public import GatewayCore
public import GatewayPluginKit
public import Hummingbird

/// Puts the client's address in the context: the socket peer, or, when the
/// peer is a trusted proxy, the first address in `X-Forwarded-For` (read
/// right to left) that is not one (``ClientAddress``).
public struct ClientAddressMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    private let trustedProxies: [CIDR]

    public init(trustedProxies: [CIDR] = []) {
        self.trustedProxies = trustedProxies
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.clientIP = ClientAddress.resolve(
            peer: context.peerAddress, forwardedFor: request.headers[values: .xForwardedFor],
            trustedProxies: trustedProxies)
        return try await next(request, context)
    }
}
