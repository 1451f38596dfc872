public import GatewayCore
public import Hummingbird
import Logging

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
        open(
            event, credentialType: credentialType, requestID: context.requestID, clientIP: context.clientIP,
            userAgent: request.headers[.userAgent], logger: context.logger)
    }

    /// ``open(_:credentialType:request:context:)`` from what it reads of the request and its context.
    func open(
        _ event: String, credentialType: String?, requestID: String, clientIP: String?, userAgent: String?, logger: Logger
    ) -> PublicRequest {
        var row = AuditEvent(appID: nil, event: event, outcome: .failure, credentialType: credentialType, requestID: requestID)
        row.clientIP = clientIP
        row.userAgent = userAgent
        return PublicRequest(gate: self, row: row, clientIP: clientIP ?? "unknown", logger: logger)
    }

    /// Runs `body` as one public request whose success writes its own rows
    /// (an enrolment, a registration, a code sent): a success is answered as
    /// ``LimitOutcome/answering(_:)`` says, a failure as
    /// ``PublicRequest/end(failing:givingBack:)`` does, the token endpoint's
    /// way too: every answer carries the limits' headers, and every failure
    /// leaves the request's row.
    ///
    /// `givesBackOnFailure`: a failure that no limit refused gives back
    /// what the request reserved, for units that count work done (a code
    /// sent) rather than attempts (which a failure must keep spent).
    public func answer(
        _ event: String, credentialType: String, request: Request, context: GatewayRequestContext,
        givesBackOnFailure: Bool = false, _ body: (inout PublicRequest) async throws -> Response
    ) async throws -> Response {
        let passage = open(event, credentialType: credentialType, request: request, context: context)
        return try await answer(passage, logger: context.logger, givesBackOnFailure: givesBackOnFailure, body)
    }

    /// ``answer(_:credentialType:request:context:givesBackOnFailure:_:)`` for a request already opened.
    func answer(
        _ opened: PublicRequest, logger: Logger, givesBackOnFailure: Bool,
        _ body: (inout PublicRequest) async throws -> Response
    ) async throws -> Response {
        var passage = opened
        do {
            let response = try await body(&passage)
            return passage.limits.answering(response)
        } catch {
            throw await passage.end(failing: error, givingBack: givesBackOnFailure).answer
        }
    }
}
