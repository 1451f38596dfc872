public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import Hummingbird
import Logging
import Tracing

/// Turns one token request into a signed identity token or a denial: the
/// one pipeline every credential goes through, in this order.
///
/// 1. **The request** (``read(_:_:_:)``): its body, its app, the profile it
///    asks for and the credential type, answered before the app's limits
///    apply (a refusal there still counts under the deployment's `ip`
///    policy: ``PublicRequestGate``).
/// 2. **The credential**: a first factor's verifier (``signIn(_:_:_:)``, in
///    TokenIssuer+SignIn.swift) or a session's refresh token
///    (``refresh(_:settings:_:)``, in TokenIssuer+Refresh.swift), with the
///    app's limits before or after it as the credential's cost says.
/// 3. **The session**: a sign-in of an app with sessions on starts one; a
///    refresh spends its token for the next.
/// 4. **The row**: the `token.issued` row, written in one statement with the
///    request's counters and its session change, before the token exists.
/// 5. **The signature**, on the signing threads.
///
/// Every request leaves exactly one row: the issued one, or the denial
/// written by ``PublicRequest/deny(_:)`` with the reason it was refused
/// (its reservations given back where the attempt was no failure).
public struct TokenIssuer: Sendable {
    public static let maximumBodyBytes = 64 * 1024

    let gate: PublicRequestGate
    let signers: SigningThreads
    let sessions: RefreshTokens
    let now: @Sendable () -> Date

    public init(
        gate: PublicRequestGate, signers: SigningThreads, sessions: RefreshTokens,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.gate = gate
        self.signers = signers
        self.sessions = sessions
        self.now = now
    }

    /// A token and, where a session began or went on, what its client keeps.
    public struct Issued: Sendable {
        public let token: String
        public let session: IssuedSession?
    }

    /// What a request came to.
    public struct Outcome: Sendable {
        /// The token, or why there is none.
        public let result: Result<Issued, GatewayError>
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
            let asked = try await read(request, context, &attempt)
            let ready: Ready
            switch asked.check {
            case .verifier(let verifier): ready = try await signIn(asked, verifier: verifier, &attempt)
            case .refresh(let settings): ready = try await refresh(asked, settings: settings, &attempt)
            }
            // Signed only once its row is committed: no token leaves without one.
            let token = try await signers.run(
                "token signature", attributes: ["gateway.token_profile": .string(attempt.profileLabel)]
            ) { try ready.minter.mint(ready.grant) }
            return attempt.outcome(.success(Issued(token: token, session: ready.session)), row: ready.issued)
        } catch {
            let answer = ErrorResponder.translate(error, logger: context.logger)
            return attempt.outcome(.failure(answer), row: await attempt.passage.deny(answer))
        }
    }

    /// What one request has learned so far: its passage through the gate
    /// (the denial row as it would be written, the limits' verdicts), its
    /// metric labels.
    struct Attempt {
        var passage: PublicRequest
        var appLabel = "none"
        var credentialTypeLabel = "none"
        var profileLabel = "none"

        init(_ passage: PublicRequest) { self.passage = passage }

        func outcome(_ result: Result<Issued, GatewayError>, row: AuditEvent) -> Outcome {
            Outcome(
                result: result, limits: passage.limits, row: row, appLabel: appLabel,
                credentialTypeLabel: credentialTypeLabel, profileLabel: profileLabel)
        }
    }

    /// What checks the request's credential.
    enum Check {
        /// A credential plugin's verifier: a first factor.
        case verifier(any CredentialVerifier)
        /// A session's refresh token, under the app's session settings.
        case refresh(SessionSettings)
    }

    /// What the request asks, once its app is found and accepts it.
    struct Asked {
        let tenant: Tenant
        let tokenRequest: TokenRequest
        let credentials: Credentials
        let check: Check
        let profile: String
        let requestID: String
    }

    /// An attempt whose row is written, ready to be signed.
    struct Ready {
        let issued: AuditEvent
        let minter: any TokenMinter
        let grant: TokenGrant
        let session: IssuedSession?
    }

    /// Reads the request and finds its app, profile and credential check:
    /// the part answered before the app's limits apply.
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
            let check: Check
            if credentials.type == RefreshToken.credentialType {
                guard let settings = tenant.settings.sessions else {
                    throw GatewayError(
                        .unsupportedCredentialType, .invalidRequest,
                        "This app keeps no sessions, so it takes no refresh tokens; sign in with a credential.")
                }
                check = .refresh(settings)
            } else {
                check = .verifier(try tenant.verifier(for: credentials.type))
            }
            labels.credentialType = credentials.type
            return Asked(
                tenant: tenant, tokenRequest: tokenRequest, credentials: credentials, check: check, profile: profile,
                requestID: context.requestID)
        }
    }

    /// The app's minter for the profile asked, and its refusal of `grant`,
    /// if any: asked before the row is written.
    func minter(_ asked: Asked, for grant: TokenGrant) throws -> any TokenMinter {
        let minter = try asked.tenant.minter(for: asked.profile)
        if let refusal = minter.refusal(for: grant) { throw refusal }
        return minter
    }

    /// The `token.issued` row of `attempt` as it stands, for `identity`.
    func issuedRow(_ attempt: Attempt, userID: String, minter: any TokenMinter, profile: String) -> AuditEvent {
        var issued = attempt.passage.row
        issued.event = "token.issued"
        issued.outcome = .success
        issued.userID = userID
        issued.keyID = minter.keyID
        issued.detail["token_profile"] = profile
        return issued
    }

    var issuedAt: Int64 { Int64(now().timeIntervalSince1970) }
}
