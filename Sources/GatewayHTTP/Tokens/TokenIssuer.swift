public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import Hummingbird
import Logging
import Tracing

/// Turns one token request into a signed identity token or a denial, and
/// writes which in one place each: the issued row in ``commit(_:_:)``, with
/// the request's counters, before the token exists; the denied row through
/// ``PublicRequest/deny(_:)``. Every request leaves exactly one of the two.
///
/// The request passes the ``PublicRequestGate`` as every public request
/// does: a request answered before its app's limits apply (malformed,
/// unknown app, disabled app) still counts under the deployment's `ip`
/// policy. Limits come before the credential check (failure policies
/// reserve their unit then, and the issued row's statement gives it back),
/// except for verifiers that are cheap to ask
/// (``CredentialVerifier/isCheapToAsk``): their verdict is known first, and
/// the issued row's statement is also the limits' check, so it is written
/// only if every limit allows. A request that names no user, or whose
/// credential proves its own user (``CredentialVerifier/provesItsUser``), is
/// held to the `user_failures` limit of the user its check found (a
/// provider's ID token's subject): a failure then counts against them, and a
/// verified attempt is refused while they are over it.
public struct TokenIssuer: Sendable {
    public static let maximumBodyBytes = 64 * 1024

    private let gate: PublicRequestGate
    private let signers: SigningThreads
    private let now: @Sendable () -> Date

    public init(gate: PublicRequestGate, signers: SigningThreads, now: @escaping @Sendable () -> Date = Date.init) {
        self.gate = gate
        self.signers = signers
        self.now = now
    }

    /// What a request came to.
    public struct Outcome: Sendable {
        /// The token, or why there is none.
        public let result: Result<String, GatewayError>
        /// The limits' verdicts, for the answer's `RateLimit` headers.
        public let limits: LimitOutcome
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
        var attempt = Attempt(gate.open("token.denied", request: request, context: context))
        do {
            let ready = try await prepare(request, context, &attempt)
            let row = try await commit(ready, &attempt)
            // Signed only once its row is committed: no token leaves without one.
            let token = try await signers.run(
                "token signature", attributes: ["gateway.token_profile": .string(attempt.profileLabel)]
            ) { try ready.minter.mint(ready.grant) }
            return attempt.outcome(.success(token), row: row)
        } catch {
            let answer = ErrorResponder.translate(error, logger: context.logger)
            return attempt.outcome(.failure(answer), row: await attempt.passage.deny(answer))
        }
    }

    /// What one request has learned so far: its passage through the gate
    /// (the denial row as it would be written, the limits' verdicts), its
    /// metric labels.
    private struct Attempt {
        var passage: PublicRequest
        var appLabel = "none"
        var credentialTypeLabel = "none"
        var profileLabel = "none"

        init(_ passage: PublicRequest) { self.passage = passage }

        func outcome(_ result: Result<String, GatewayError>, row: AuditEvent) -> Outcome {
            Outcome(
                result: result, limits: passage.limits, row: row, appLabel: appLabel,
                credentialTypeLabel: credentialTypeLabel, profileLabel: profileLabel)
        }
    }

    /// What the request asks, once its app is found and accepts it.
    private struct Asked {
        let tenant: Tenant
        let tokenRequest: TokenRequest
        let credentials: Credentials
        let verifier: any CredentialVerifier
        let profile: String
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

    /// Reads the request and finds its app, profile and verifier: the part
    /// answered before the app's limits apply.
    private func read(
        _ request: Request, _ context: GatewayRequestContext, _ attempt: inout Attempt
    ) async throws -> Asked {
        var labels = (app: "none", credentialType: "none", profile: "none")
        defer {
            attempt.appLabel = labels.app
            attempt.credentialTypeLabel = labels.credentialType
            attempt.profileLabel = labels.profile
        }
        return try await attempt.passage.beforeTheAppsLimits { passage in
            let body = try await request.readBody(upTo: Self.maximumBodyBytes)
            let fields = try TokenRequestFields(body: Array(buffer: body), contentType: request.headers[.contentType])
            passage.row.appID = fields.appID.flatMap(AppID.init)
            context.logFacts.appID = passage.row.appID
            let tokenRequest = try fields.validated()
            passage.row.userID = tokenRequest.userID

            let tenant = try await passage.app(tokenRequest.appID)
            labels.app = tokenRequest.appID.description
            let profile = try tenant.profileName(requested: tokenRequest.tokenProfile)
            labels.profile = profile
            guard
                let credentials = tokenRequest.credentials
                    ?? tenant.settings.credentialTypes.first.map({ Credentials(type: $0) })
            else {
                throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app accepts no credentials.")
            }
            passage.row.credentialType = credentials.type
            let verifier = try tenant.verifier(for: credentials.type)
            labels.credentialType = credentials.type
            return Asked(
                tenant: tenant, tokenRequest: tokenRequest, credentials: credentials, verifier: verifier,
                profile: profile)
        }
    }

    private func prepare(
        _ request: Request, _ context: GatewayRequestContext, _ attempt: inout Attempt
    ) async throws -> Ready {
        let asked = try await read(request, context, &attempt)
        let (tokenRequest, credentials, verifier) = (asked.tokenRequest, asked.credentials, asked.verifier)
        var subjects = verifier.rateLimitSubjects(for: credentials)
        subjects[RateLimitPolicy.app.name] = "*"
        // A user the request only names, where the credential proves its own, counts for nothing until the proof holds.
        let countsNamedUser = tokenRequest.userID != nil && !verifier.provesItsUser
        if countsNamedUser, let userID = tokenRequest.userID { subjects[RateLimitPolicy.userFailures.name] = userID }
        let app = asked.tenant.settings
        let verifiesFirst = verifier.isCheapToAsk
        if !verifiesFirst { try await attempt.passage.check(subjects, app: app) }

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
        // The user the check found, when the named one (if any) was not counted: their failure limit applies from here on.
        let userFoundByCheck: String? =
            switch verdict {
            case _ where countsNamedUser: nil
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
                try await attempt.passage.check(subjects, app: app)
            } else if let userFoundByCheck {
                // Beside the reservation taken before, which stays as the failure's count.
                try await attempt.passage.countFailure(ofUser: userFoundByCheck, app: app)
            }
            // Otherwise the reservation taken before stays: it is the failure's count.
            attempt.passage.row.reason = reason
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
            minter = try asked.tenant.minter(for: asked.profile)
            if let refusal = minter.refusal(for: grant) { throw refusal }
        } catch {
            // The credential was right: its reservations are no failure (no active key, a uid the vendor refuses).
            await attempt.passage.giveBackReservations()
            throw error
        }

        var issued = attempt.passage.row
        issued.event = "token.issued"
        issued.outcome = .success
        issued.userID = identity.userID
        issued.keyID = minter.keyID
        issued.detail["token_profile"] = asked.profile
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
    private func commit(_ ready: Ready, _ attempt: inout Attempt) async throws -> AuditEvent {
        if ready.verifiedBeforeLimits {
            try await attempt.passage.admit(ready.subjects, app: ready.app, recording: ready.issued)
        } else {
            try await attempt.passage.release(
                readingFailuresOf: ready.userFoundByCheck, app: ready.app, recording: ready.issued)
        }
        return ready.issued
    }
}
