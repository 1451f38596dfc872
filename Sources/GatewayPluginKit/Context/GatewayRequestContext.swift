public import GatewayCore
public import Hummingbird
import Synchronization

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
    /// The client's address after trusted-proxy rules, set by ``ClientAddressMiddleware``.
    public var clientIP: String?
    /// What the request's access-log line reports beyond the request itself;
    /// a reference, so routes deep in the chain can fill it in.
    public let logFacts = RequestLogFacts()

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.peerAddress = source.channel.remoteAddress?.ipAddress
    }
}

/// Facts a route learns that belong in the request's access-log line.
public final class RequestLogFacts: Sendable {
    private let storedAppID = Mutex<AppID?>(nil)

    public init() {}

    /// The app the request was about, once known.
    public var appID: AppID? {
        get { storedAppID.withLock { $0 } }
        set { storedAppID.withLock { $0 = newValue } }
    }
}

extension GatewayRequestContext {
    /// A context for a call the gateway makes to its own routes while
    /// serving `outer` (the console calling the admin API): the same request
    /// id, logger and client, fresh route parameters, no admin token yet.
    public init(callingFrom outer: GatewayRequestContext) {
        self.coreContext = .init(source: outer)
        self.peerAddress = outer.peerAddress
        self.clientIP = outer.clientIP
        self.requestID = outer.requestID
    }
}
