public import GatewayCore
public import Hummingbird

/// The one way a public request against an app goes: the token endpoint and
/// every public route a plugin adds (`POST /v1/phone_codes`) pass through
/// it, so each pays the client's budget, finds its app and meets the app's
/// limits in the same order, and leaves the same kind of audit row.
/// ``open(_:credentialType:request:context:)`` starts one request's
/// ``PublicRequest``, which walks those phases.
public struct PublicRequestGate: Sendable {
    let tenants: any TenantLookup
    let limits: any RequestLimits
    let ledger: any RequestLedger
    /// How finding the app waits for the database before the request is answered 503.
    let databaseRetry: DatabaseRetry

    public init(tenants: any TenantLookup, limits: any RequestLimits, ledger: any RequestLedger, databaseRetry: DatabaseRetry) {
        self.tenants = tenants
        self.limits = limits
        self.ledger = ledger
        self.databaseRetry = databaseRetry
    }

    /// One request's passage. Its row starts as the failure `event` (say
    /// `token.denied`), with the request's id, client and user agent; the
    /// route fills in what it learns.
    public func open(
        _ event: String, credentialType: String? = nil, request: Request, context: GatewayRequestContext
    ) -> PublicRequest {
        var row = AuditEvent(
            appID: nil, event: event, outcome: .failure, credentialType: credentialType, requestID: context.requestID)
        row.clientIP = context.clientIP
        row.userAgent = request.headers[.userAgent]
        return PublicRequest(gate: self, row: row, clientIP: context.clientIP ?? "unknown", logger: context.logger)
    }
}
