public import GatewayCore
public import Hummingbird
import Logging

/// The one way a public request against an app goes: the token endpoint and
/// every public route a plugin adds (`POST /v1/phone_codes`) pass through
/// it, so each pays the client's budget, finds its app and meets the app's
/// limits in the same order, and leaves the same kind of audit row.
/// ``open(_:credentialType:cost:request:context:)`` starts one request's
/// ``PublicRequest``, whose ``PublicRequestMachine`` orders those steps.
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
    /// route fills in what it learns. `cost` is how the route's work is paid
    /// for, where the route knows it before reading the request.
    public func open(
        _ event: String, credentialType: String? = nil, cost: PublicRequest.Cost? = nil, request: Request,
        context: GatewayRequestContext
    ) -> PublicRequest {
        open(
            event, credentialType: credentialType, cost: cost, requestID: context.requestID, clientIP: context.clientIP,
            userAgent: request.headers[.userAgent], logger: context.logger)
    }

    /// ``open(_:credentialType:cost:request:context:)`` from what it reads of the request and its context.
    func open(
        _ event: String, credentialType: String?, cost: PublicRequest.Cost?, requestID: String, clientIP: String?,
        userAgent: String?, logger: Logger
    ) -> PublicRequest {
        var row = AuditEvent(appID: nil, event: event, outcome: .failure, credentialType: credentialType, requestID: requestID)
        row.clientIP = clientIP
        row.userAgent = userAgent
        return PublicRequest(gate: self, row: row, clientIP: clientIP ?? "unknown", cost: cost, logger: logger)
    }

    /// Runs `body` as one public request of a route that pays for its work
    /// as `cost` says: a success is answered, once its row is written, as
    /// ``LimitOutcome/answering(_:)`` says, a failure as
    /// ``PublicRequest/end(failing:)`` does, the token endpoint's way too:
    /// every answer carries the limits' headers, and every failure leaves the
    /// request's row.
    public func answer(
        _ event: String, credentialType: String, cost: PublicRequest.Cost, request: Request,
        context: GatewayRequestContext, _ body: (inout PublicRequest) async throws -> Response
    ) async throws -> Response {
        let passage = open(event, credentialType: credentialType, cost: cost, request: request, context: context)
        return try await answer(passage, body)
    }

    /// ``answer(_:credentialType:cost:request:context:_:)`` for a request already opened.
    func answer(_ opened: PublicRequest, _ body: (inout PublicRequest) async throws -> Response) async throws -> Response {
        var passage = opened
        do {
            let response = try await body(&passage)
            return try passage.answering(response)
        } catch {
            throw await passage.end(failing: error).answer
        }
    }
}
