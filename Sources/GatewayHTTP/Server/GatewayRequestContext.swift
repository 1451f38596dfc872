public import GatewayPostgres
public import Hummingbird


/// The request context of every gateway route: Hummingbird's core storage
/// plus the request id that ties the response, the log lines and the audit
/// row together.
public struct GatewayRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by ``RequestIDMiddleware`` before any route runs.
    public var requestID: String = ""
    /// The admin token of an `/admin` request, set by ``AdminAuthMiddleware``.
    public var admin: AdminTokenRecord?
    /// The socket peer's address; `nil` where there is no socket (router tests).
    public let peerAddress: String?
    /// The client's address after trusted-proxy rules, set by ``RequestIDMiddleware``.
    public var clientIP: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }
}
