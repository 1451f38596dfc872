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

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}
