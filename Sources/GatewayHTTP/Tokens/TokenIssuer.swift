public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import Hummingbird
import Logging
import Tracing

/// Turns one token request into a signed identity token or a denial, and
/// writes which in one place each: the issued row in ``commit(_:_:logger:)``, with
/// the request's counters, before the token exists; the denied row in
/// ``deny(_:_:)``. Every request leaves exactly one of the two.
///
/// Limits come before the credential check (``RateLimiter``: failure
/// policies reserve their unit then, and the issued row's statement gives it
/// back), except for verifiers that are cheap to ask
/// (``CredentialVerifier/isCheapToAsk``): their verdict is known first,
/// and the issued row's statement is also the limits' check, so it is
/// written only if every limit allows. A request answered before its app's
/// limits apply (malformed, unknown app, disabled app) still counts under the
/// deployment's `ip` policy (``RateLimiter/countClient(_:into:noting:)``).
/// A request that names no user is held to the `user_failures` limit of the
/// user its check found (a provider's ID token's subject): a failure then
/// counts against them, and a verified attempt is refused while they are
/// over it.
public struct TokenIssuer: Sendable {
    public static let maximumBodyBytes = 64 * 1024

    private let tenants: TenantCache
    private let ledger: any RequestLedger
    private let rateLimiter: RateLimiter
    private let databaseTimeout: Duration
    private let now: @Sendable () -> Date

    public init(
        tenants: TenantCache, ledger: any RequestLedger, rateLimiter: RateLimiter, databaseTimeout: Duration,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.tenants = tenants
        self.ledger = ledger
        self.rateLimiter = rateLimiter
        self.databaseTimeout = databaseTimeout
        self.now = now
    }

    /// What a request came to.
    public struct Outcome: Sendable {
        /// The token, or why there is none.
        public let result: Result<String, GatewayError>
        /// The limits' verdicts, for the answer's `RateLimit` headers.
        public let limits: RateLimiter.Outcome
        /// Its row: `token.issued`, or `token.denied` with a reason.
        public let row: AuditEvent
        /// The app, credential type and token profile the metrics name it by,
        /// `"none"` until known: ids and types a client makes up cannot grow
        /// the metrics without bound.
        public let appLabel: String
        public let credentialTypeLabel: String
        public let profileLabel: String
    }

    public func issue(_ request: Request, context: GatewayRequestContext) async -> Outcome {
        var attempt = Attempt(requestID: context.requestID, clientIP: context.clientIP, userAgent: request.headers[.userAgent])
        do {
            let ready = try await prepare(request, context, &attempt)
            let row = try await commit(ready, &attempt, logger: context.logger)
            // Signed only once its row is committed: no token leaves without one.
            let token = try await SigningThreads.shared.run(
                "token signature", attributes: ["gateway.token_profile": .string(attempt.profileLabel)]
            ) { try ready.minter.mint(ready.grant) }
            return attempt.outcome(.success(token), row: row)
        } catch {
            return await deny(ErrorResponder.translate(error, logger: context.logger), attempt)
        }
    }

    /// What one request has learned so far: its denial row as it would be
    /// written, its limits' verdicts, its metric labels.
    private struct Attempt {
        var denial: AuditEvent
        var limits = RateLimiter.Outcome.unlimited
        var clientCounted = false
        var appLabel = "none"
        var credentialTypeLabel = "none"
        var profileLabel = "none"
        let clientIP: String

        init(requestID: String, clientIP: String?, userAgent: String?) {
            denial = AuditEvent(appID: nil, event: "token.denied", outcome: .failure, requestID: requestID)
            denial.clientIP = clientIP
            denial.userAgent = userAgent
            self.clientIP = clientIP ?? "unknown"
        }

        func outcome(_ result: Result<String, GatewayError>, row: AuditEvent) -> Outcome {
            Outcome(
                result: result, limits: limits, row: row, appLabel: appLabel, credentialTypeLabel: credentialTypeLabel,
                profileLabel: profileLabel)
        }
    }

    /// A verified attempt, ready to be recorded and signed.
    private struct Ready {
        let issued: AuditEvent
        let subjects: [String: String]
        /// The verified user, when the request named none.
        let userFoundByCheck: String?
        let app: AppSettings
        let verifiedBeforeLimits: Bool
        let minter: any TokenMinter
        let grant: TokenGrant
    }

    private func prepare(
        _ request: Request, _ context: GatewayRequestContext, _ attempt: inout Attempt
    ) async throws -> Ready {
        let tenant: Tenant
        let tokenRequest: TokenRequest
        let credentials: Credentials
        let verifier: any CredentialVerifier
        let profile: String
        do {
            let body = try await request.readBody(upTo: Self.maximumBodyBytes)
            let fields = try TokenRequestFields(body: Array(buffer: body), contentType: request.headers[.contentType])
            attempt.denial.appID = fields.appID.flatMap(AppID.init)
            context.logFacts.appID = attempt.denial.appID
            tokenRequest = try fields.validated()
            attempt.denial.userID = tokenRequest.userID

            let appID = tokenRequest.appID
            if tenants.cachedTenant(for: appID) == nil {
                // Not in memory: made-up ids cost a lookup, so they pay the client's budget first.
                attempt.clientCounted = true
                try await rateLimiter.countClient(attempt.clientIP, into: &attempt.limits, noting: &attempt.denial)
            }
            tenant = try await tenants.tenant(for: appID, within: databaseTimeout)
            attempt.appLabel = appID.description
            guard tenant.settings.isEnabled else {
                throw GatewayError(.appDisabled, .forbidden, "This app is disabled.")
            }
            profile = try tenant.profileName(requested: tokenRequest.tokenProfile)
            attempt.profileLabel = profile
            guard
                let requested = tokenRequest.credentials
                    ?? tenant.settings.credentialTypes.first.map({ Credentials(type: $0) })
            else {
                throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app accepts no credentials.")
            }
            credentials = requested
            attempt.denial.credentialType = credentials.type
            verifier = try tenant.verifier(for: credentials.type)
            attempt.credentialTypeLabel = credentials.type
        } catch let error as GatewayError where error.code == .rateLimited {
            throw error
        } catch {
            // Answered before the app's limits apply: the client's budget still pays for it.
            if !attempt.clientCounted {
                try await rateLimiter.countClient(attempt.clientIP, into: &attempt.limits, noting: &attempt.denial)
            }
            throw error
        }

        var subjects = verifier.rateLimitSubjects(for: credentials)
        subjects[RateLimitPolicy.clientIP.name] = attempt.clientIP
        subjects[RateLimitPolicy.app.name] = "*"
        if let userID = tokenRequest.userID { subjects[RateLimitPolicy.userFailures.name] = userID }
        let app = tenant.settings
        let verifiesFirst = verifier.isCheapToAsk
        if !verifiesFirst {
            try await rateLimiter.check(
                subjects, app: app, clientCounted: attempt.clientCounted, into: &attempt.limits, noting: &attempt.denial)
        }

        let identity: VerifiedIdentity
        let attemptToVerify = CredentialAttempt(
            app: app, userID: tokenRequest.userID, credentials: credentials, requestID: context.requestID,
            nonce: tokenRequest.nonce)
        let verdict = try await Spans.run(
            "credential check", attributes: Self.credentialAttributes(credentials.type, userID: tokenRequest.userID)
        ) { span in
            let verdict = try await verifier.verify(attemptToVerify)
            span?.attributes["gateway.credential.verdict"] = verdict.label
            return verdict
        }
        // The user the check found, when the request named none: their failure limit applies from here on.
        let userFoundByCheck: String? =
            switch verdict {
            case _ where tokenRequest.userID != nil: nil
            case .verified(let verified): verified.userID
            case .rejected(_, let userID): userID
            case .undecided: nil
            }
        switch verdict {
        case .verified(let verified):
            identity = verified
            if let userFoundByCheck { subjects[RateLimitPolicy.userFailures.name] = userFoundByCheck }
        case .rejected(let reason, _), .undecided(let reason):
            if verifiesFirst {
                if let userFoundByCheck { subjects[RateLimitPolicy.userFailures.name] = userFoundByCheck }
                // The reservation this takes is the failure's count.
                try await rateLimiter.check(
                    subjects, app: app, clientCounted: attempt.clientCounted, into: &attempt.limits, noting: &attempt.denial)
            } else if let userFoundByCheck {
                // Beside the reservation taken before, which stays as the failure's count.
                try await rateLimiter.countFailure(
                    ofUser: userFoundByCheck, app: app, into: &attempt.limits, noting: &attempt.denial)
            }
            // Otherwise the reservation taken before stays: it is the failure's count.
            attempt.denial.reason = reason
            guard case .rejected = verdict else {
                throw GatewayError(
                    .credentialServiceUnavailable, .upstreamFailure,
                    "The service that checks these credentials did not answer; retry in a moment.")
            }
            throw GatewayError.invalidCredentials
        }
        let grant = TokenGrant(
            app: app, identity: identity, nonce: tokenRequest.nonce, issuedAt: Int64(now().timeIntervalSince1970))
        let minter: any TokenMinter
        do {
            minter = try tenant.minter(for: profile)
            if let refusal = minter.refusal(for: grant) { throw refusal }
        } catch {
            // The credential was right: its reservations are no failure (no active key, a uid the vendor refuses).
            try? await rateLimiter.release(attempt.limits)
            throw error
        }

        var issued = attempt.denial
        issued.event = "token.issued"
        issued.outcome = .success
        issued.userID = identity.userID
        issued.keyID = minter.keyID
        issued.detail["token_profile"] = profile
        return Ready(
            issued: issued, subjects: subjects, userFoundByCheck: userFoundByCheck, app: app,
            verifiedBeforeLimits: verifiesFirst, minter: minter, grant: grant)
    }

    private static func credentialAttributes(_ type: String, userID: String?) -> SpanAttributes {
        var attributes: SpanAttributes = ["gateway.credential.type": .string(type)]
        if Spans.recordsUserIDs, let userID { attributes["enduser.id"] = userID }
        return attributes
    }

    /// Writes the issued row, with the request's counters, in one statement:
    /// after a verdict asked before the limits that statement also applies the limits and
    /// writes the row only if they allow; otherwise it gives back the
    /// reservations the check took, and reads the failure limit of a user
    /// the check found (the request named none), writing the row only if
    /// it allows. Returns the row written.
    private func commit(_ ready: Ready, _ attempt: inout Attempt, logger: Logger) async throws -> AuditEvent {
        if ready.verifiedBeforeLimits {
            try await rateLimiter.admit(
                ready.subjects, app: ready.app, clientCounted: attempt.clientCounted, recording: ready.issued,
                into: &attempt.limits, noting: &attempt.denial)
            return ready.issued
        }
        do {
            try await rateLimiter.release(
                readingFailuresOf: ready.userFoundByCheck, app: ready.app, recording: ready.issued,
                into: &attempt.limits, noting: &attempt.denial)
        } catch let error as GatewayError where error.code == .rateLimited {
            throw error
        } catch {
            logger.error("audit write failed; token withheld", metadata: ["error": "\(error)"])
            throw GatewayError.unavailable
        }
        return ready.issued
    }

    /// Records the denial: kept in memory while PostgreSQL is away
    /// (``RequestLedger/recordEventually(_:)``), and left out for a client
    /// the deployment's `ip` policy refused just before (the first refusal of
    /// such a run is in the trail). When the issued row's write failed or
    /// timed out, that row may still commit late: this denial, with the same
    /// request id, says what the client got.
    private func deny(_ error: GatewayError, _ attempt: Attempt) async -> Outcome {
        var row = attempt.denial
        if row.reason == nil { row.reason = error.code.rawValue }
        if !attempt.limits.repeatsRefusal { await ledger.recordEventually(row) }
        return attempt.outcome(.failure(error), row: row)
    }
}
