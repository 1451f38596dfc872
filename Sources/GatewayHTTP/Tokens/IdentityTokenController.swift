public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import Hummingbird
import HTTPTypes
import Logging
import CoreMetrics

/// `POST /v1/identity_tokens` (and Layer's sample paths `/identity_tokens`,
/// `/authenticate`): applies the app's rate limits, checks the credentials and
/// answers a Layer identity token. Every request, issued or denied, leaves one
/// audit row; a token is answered only after its row is committed, and a
/// denial's row is kept in memory while PostgreSQL is away
/// (``RequestLedger/recordEventually(_:)``).
///
/// Limits come before the credential check (``RateLimiter``: failure
/// policies reserve their unit then, and a verified attempt gives it back in
/// the statement that writes its issued row), except for verifiers that
/// answer from memory (``CredentialVerifier/answersFromMemory``): their
/// verdict is known first, and an issued token's counters and row take one
/// statement (``RateLimiter/admit(_:app:clientCounted:recording:)``), signed
/// only once it allows. A request answered before its app's limits apply
/// (malformed, unknown app, disabled app) is still counted under the
/// deployment's `ip` policy (``RateLimiter/countClient(_:into:noting:)``).
public struct IdentityTokenController: Sendable {
    public static let maximumBodyBytes = 64 * 1024
    public static let paths: [RouterPath] = ["/v1/identity_tokens", "/identity_tokens", "/authenticate"]

    private let tenants: TenantDirectory
    private let ledger: any RequestLedger
    private let rateLimiter: RateLimiter
    private let databaseTimeout: Duration
    private let now: @Sendable () -> Date

    public init(
        tenants: TenantDirectory, ledger: any RequestLedger, rateLimiter: RateLimiter, databaseTimeout: Duration,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.tenants = tenants
        self.ledger = ledger
        self.rateLimiter = rateLimiter
        self.databaseTimeout = databaseTimeout
        self.now = now
    }

    public func addRoutes(to router: Router<GatewayRequestContext>) {
        for path in Self.paths {
            router.post(path) { request, context in try await self.respond(to: request, context: context) }
        }
    }

    func respond(to request: Request, context: GatewayRequestContext) async throws -> Response {
        var event = AuditEvent(appID: nil, event: "token.denied", outcome: .failure, requestID: context.requestID)
        event.clientIP = context.clientIP
        event.userAgent = request.headers[.userAgent]
        var limits = RateLimiter.Outcome.unlimited
        var labels = MetricLabels()
        var result: Result<IssuedToken, GatewayError>
        do {
            result = .success(
                try await issueToken(for: request, context: context, event: &event, limits: &limits, labels: &labels))
        } catch {
            result = .failure(ErrorResponder.translate(error, logger: context.logger))
        }
        if case .success(let issued) = result, !issued.isAudited {
            do {
                try await rateLimiter.release(limits, recording: event)
            } catch {
                context.logger.error("audit write failed; token withheld", metadata: ["error": "\(error)"])
                result = .failure(.unavailable)
            }
        }
        if case .failure(let error) = result {
            if event.outcome == .success {
                // The token is withheld after its issued row was written, or while that row's statement may
                // still commit late: this denial, with the same request id, says what the client got.
                event.withdrawIssue()
            }
            if event.reason == nil { event.reason = error.code.rawValue }
        }

        Counter(
            label: "gateway_tokens_total",
            dimensions: [
                ("app_id", labels.app),
                ("credential_type", labels.credentialType),
                ("outcome", event.outcome == .success ? "issued" : "denied"),
                ("reason", event.reason ?? "none"),
            ]
        ).increment()
        switch result {
        case .success(let issued):
            var response = Self.tokenResponse(issued.token)
            response.headers.set(limits.headers)
            return response
        case .failure(var error):
            if !limits.repeatsRefusal { await ledger.recordEventually(event) }
            if error.headers.isEmpty { error.headers = limits.headers }
            throw error
        }
    }

    /// What `gateway_tokens_total` names a request by: an app only once it
    /// is found, a credential type only once the app accepts it. Ids and
    /// types a client makes up stay "none", so they cannot grow the metrics
    /// without bound.
    private struct MetricLabels {
        var app = "none"
        var credentialType = "none"
    }

    /// A minted token, and whether its audit row is committed already.
    private struct IssuedToken {
        let token: String
        let isAudited: Bool
    }

    /// Runs the flow up to a minted token, filling `event` as facts become known.
    private func issueToken(
        for request: Request, context: GatewayRequestContext, event: inout AuditEvent,
        limits: inout RateLimiter.Outcome, labels: inout MetricLabels
    ) async throws -> IssuedToken {
        let clientIP = context.clientIP ?? "unknown"
        var clientCounted = false
        let tenant: Tenant
        let tokenRequest: TokenRequest
        let credentials: Credentials
        let verifier: any CredentialVerifier
        do {
            let body = try await request.readBody(upTo: Self.maximumBodyBytes)
            let fields = try TokenRequestFields(body: Array(buffer: body), contentType: request.headers[.contentType])
            event.appID = fields.appID.flatMap(AppID.init)
            context.logFacts.appID = event.appID
            tokenRequest = try fields.validated()
            event.userID = tokenRequest.userID

            let appID = tokenRequest.appID
            if tenants.cachedTenant(for: appID) == nil {
                // Not in memory: made-up ids cost a lookup, so they pay the client's budget first.
                clientCounted = true
                try await rateLimiter.countClient(clientIP, into: &limits, noting: &event)
            }
            tenant = try await tenants.tenant(for: appID, within: databaseTimeout)
            labels.app = appID.description
            guard tenant.settings.isEnabled else {
                throw GatewayError(.appDisabled, status: 403, "This app is disabled.")
            }
            guard
                let requested = tokenRequest.credentials
                    ?? tenant.settings.credentialTypes.first.map({ Credentials(type: $0) })
            else {
                throw GatewayError(.unsupportedCredentialType, status: 400, "This app accepts no credentials.")
            }
            credentials = requested
            event.credentialType = credentials.type
            verifier = try tenant.verifier(for: credentials.type)
            labels.credentialType = credentials.type
        } catch let error as GatewayError where error.code == .rateLimited {
            throw error
        } catch {
            // Answered before the app's limits apply: the client's budget still pays for it.
            if !clientCounted { try await rateLimiter.countClient(clientIP, into: &limits, noting: &event) }
            throw error
        }

        var subjects = verifier.rateLimitSubjects(for: credentials)
        subjects[RateLimitPolicy.clientIP.name] = clientIP
        subjects[RateLimitPolicy.app.name] = "*"
        if let userID = tokenRequest.userID { subjects[RateLimitPolicy.userFailures.name] = userID }
        let settings = tenant.settings
        let verifiesFirst = verifier.answersFromMemory
        if !verifiesFirst {
            try await rateLimiter.check(subjects, app: settings, clientCounted: clientCounted, into: &limits, noting: &event)
        }

        let attempt = CredentialAttempt(
            app: tenant.settings, userID: tokenRequest.userID, credentials: credentials, requestID: context.requestID)
        let identity: VerifiedIdentity
        switch try await verifier.verify(attempt) {
        case .verified(let verified):
            identity = verified
        case .rejected(let reason):
            if verifiesFirst {
                // The reservation this takes is the failure's count.
                try await rateLimiter.check(subjects, app: settings, clientCounted: clientCounted, into: &limits, noting: &event)
            }
            event.reason = reason
            throw GatewayError.invalidCredentials
        }
        guard let signingKey = tenant.signingKey else {
            // The credential was right: its reservations are no failure.
            try? await rateLimiter.release(limits)
            throw GatewayError(
                .noSigningKey, status: 503, "This app has no active signing key; an operator must activate one.")
        }

        var issued = event
        issued.event = "token.issued"
        issued.outcome = .success
        issued.userID = identity.userID
        issued.keyID = signingKey.keyID
        if verifiesFirst {
            // Counted and, if every limit allows, audited in one statement; signed only then.
            try await rateLimiter.admit(
                subjects, app: settings, clientCounted: clientCounted, recording: issued, into: &limits, noting: &event)
        }
        event = issued

        let claims = IdentityTokenClaims(
            issuer: tenant.settings.providerID, identity: identity, nonce: tokenRequest.nonce,
            issuedAt: Int64(now().timeIntervalSince1970), lifetimeSeconds: tenant.settings.tokenTTLSeconds)
        return IssuedToken(token: try signingKey.mint(claims), isAudited: verifiesFirst)
    }

    private static func tokenResponse(_ token: String) -> Response {
        var body = ByteBufferAllocator().buffer(capacity: token.utf8.count + 22)
        body.writeString(#"{"identity_token":""#)
        body.writeString(token)
        body.writeString(#""}"#)
        return Response(status: .ok, headers: tokenHeaders, body: .init(byteBuffer: body))
    }

    private static let tokenHeaders: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
}

extension AuditEvent {
    /// Turns an issued token's event into the denial its request got when the token is withheld.
    fileprivate mutating func withdrawIssue() {
        event = "token.denied"
        outcome = .failure
        reason = nil
    }
}
