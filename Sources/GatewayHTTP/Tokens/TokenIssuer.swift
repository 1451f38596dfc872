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
///    asks for and the credential type, and from that how it pays for its
///    work (``PublicRequestMachine/Cost``); a refusal there still counts
///    under the deployment's `ip` policy.
/// 2. **The credential**: a first factor's verifier (``signIn(_:_:_:)``, in
///    TokenIssuer+SignIn.swift), a session's refresh token
///    (``refresh(_:settings:_:)``, in TokenIssuer+Refresh.swift) or a
///    second factor's code with its ticket (``completeSecondFactor(_:kind:_:)``,
///    in TokenIssuer+SecondFactor.swift), with the app's limits before or
///    after it as the credential's cost says.
/// 3. **The second factor**: a first factor of a user who owes one is
///    answered with a ticket for it instead of a token (403 `mfa_required`).
/// 4. **The session**: a sign-in of an app with sessions on starts one; a
///    refresh spends its token for the next.
/// 5. **The row**: the `token.issued` row, written in one statement with the
///    request's counters and its session change, before the token leaves.
/// 6. **The signature**, on the signing threads: beside the row's statement
///    where every limit that counts requests allowed this one in memory,
///    after it otherwise (``TokenSignatures``); handed out only once the row
///    is committed.
///
/// Every request leaves exactly one row: the issued one, or the denial
/// written by ``PublicRequest/end(failing:)`` with the reason it was refused
/// (its reservations given back where the attempt was no failure).
public struct TokenIssuer: Sendable {
    public static let maximumBodyBytes = 64 * 1024

    let gate: PublicRequestGate
    let signers: SigningThreads
    let sessions: RefreshTokens
    let secondFactors: SecondFactors
    let now: @Sendable () -> Date

    public init(
        gate: PublicRequestGate, signers: SigningThreads, sessions: RefreshTokens, secondFactors: SecondFactors,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.gate = gate
        self.signers = signers
        self.sessions = sessions
        self.secondFactors = secondFactors
        self.now = now
    }

    /// A token and, where a session began or went on, what its client keeps.
    public struct Issued: Sendable {
        public let token: String
        /// A refresh's tokens for its `additional_nonces`, in their order.
        public let additionalTokens: [String]
        public let session: IssuedSession?
    }

    /// What a request that was not refused is answered.
    public enum Answer: Sendable {
        case token(Issued)
        /// The first factor was right; a second is owed.
        case secondFactorRequired(SecondFactorChallenge)
    }

    /// What a request came to.
    public struct Outcome: Sendable {
        /// The token (or the second factor it waits on), or why there is
        /// none, as ``PublicRequest/end(failing:givingBack:)`` answers it.
        public let result: Result<Answer, HeaderedError>
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
            case .verifier(let verifier):
                switch try await signIn(asked, verifier: verifier, &attempt) {
                case .ready(let signedIn): ready = signedIn
                case .secondFactorRequired(let challenge, let row):
                    return attempt.outcome(.success(.secondFactorRequired(challenge)), row: row)
                }
            case .refresh(let settings): ready = try await refresh(asked, settings: settings, &attempt)
            case .secondFactor(let kind): ready = try await completeSecondFactor(asked, kind: kind, &attempt)
            }
            // Its row is committed: the tokens may leave.
            let tokens = try await ready.signatures.tokens()
            let issued = Issued(token: tokens[0], additionalTokens: Array(tokens.dropFirst()), session: ready.session)
            return attempt.outcome(.success(.token(issued)), row: ready.issued)
        } catch {
            let ending = await attempt.passage.end(failing: error)
            return attempt.outcome(.failure(ending.answer), row: ending.row)
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

        func outcome(_ result: Result<Answer, HeaderedError>, row: AuditEvent) -> Outcome {
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
        /// A second factor's code (its credential type) with a sign-in's ticket.
        case secondFactor(String)

        /// How the check pays for its work: a verifier as costly as it says,
        /// a refresh token's digest first, a second factor's code after its
        /// user's `mfa_failures` reserved its unit.
        var cost: PublicRequest.Cost {
            switch self {
            case .verifier(let verifier): verifier.isCheapToAsk ? .verifyFirst : .limitsFirst
            case .refresh: .verifyFirst
            case .secondFactor: .limitsFirst
            }
        }
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

    /// An attempt whose row is written, its tokens signed or to be.
    struct Ready {
        let issued: AuditEvent
        /// The grant's token first, then a refresh's for its `additional_nonces`.
        let signatures: TokenSignatures
        let session: IssuedSession?
    }

    /// Where a first factor's sign-in got to.
    enum SignedIn {
        case ready(Ready)
        /// A second factor is owed: the ticket's answer, and the request's row (written).
        case secondFactorRequired(SecondFactorChallenge, row: AuditEvent)
    }

    /// Reads the request and finds its app, profile and credential check,
    /// and from the check how the request pays for its work: a failure here
    /// still counts under the deployment's `ip` policy (``PublicRequestMachine``).
    private func read(
        _ request: Request, _ context: GatewayRequestContext, _ attempt: inout Attempt
    ) async throws -> Asked {
        let body = try await request.readBody(upTo: Self.maximumBodyBytes)
        let fields = try TokenRequestFields(body: Array(buffer: body), contentType: request.headers[.contentType])
        attempt.passage.row.appID = fields.appID.flatMap(AppID.init)
        context.logFacts.appID = attempt.passage.row.appID
        let tokenRequest = try fields.validated()
        attempt.passage.row.userID = tokenRequest.userID

        let tenant = try await attempt.passage.app(tokenRequest.appID)
        attempt.appLabel = tokenRequest.appID.description
        let profile = try tenant.profileName(requested: tokenRequest.tokenProfile)
        attempt.profileLabel = profile
        guard
            let credentials = tokenRequest.credentials
                ?? tenant.settings.credentialTypes.first.map({ Credentials(type: $0) })
        else {
            throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app accepts no credentials.")
        }
        attempt.passage.row.credentialType = credentials.type
        let check: Check
        if SecondFactors.credentialTypes.contains(credentials.type) {
            guard tenant.settings.mfa != nil else {
                throw GatewayError(
                    .unsupportedCredentialType, .invalidRequest,
                    "This app asks for no second factor, so it takes no \(credentials.type) codes.")
            }
            check = .secondFactor(credentials.type)
        } else if credentials.type == RefreshToken.credentialType {
            guard let settings = tenant.settings.sessions else {
                throw GatewayError(
                    .unsupportedCredentialType, .invalidRequest,
                    "This app keeps no sessions, so it takes no refresh tokens; sign in with a credential.")
            }
            check = .refresh(settings)
        } else {
            check = .verifier(try tenant.verifier(for: credentials.type))
        }
        attempt.credentialTypeLabel = credentials.type
        if !tokenRequest.additionalNonces.isEmpty, credentials.type != RefreshToken.credentialType {
            throw GatewayError.invalidRequest(
                "additional_nonces is for refreshes (credentials.type refresh_token): a sign-in answers one nonce.")
        }
        try attempt.passage.paying(check.cost)
        return Asked(
            tenant: tenant, tokenRequest: tokenRequest, credentials: credentials, check: check, profile: profile,
            requestID: context.requestID)
    }

    /// The app's minter for the profile asked, and its refusal of `grant`,
    /// if any: asked before the row is written.
    func minter(_ asked: Asked, for grant: TokenGrant) throws -> any TokenMinter {
        let minter = try asked.tenant.minter(for: asked.profile)
        if let refusal = minter.refusal(for: grant) { throw refusal }
        return minter
    }

    /// ``minter(_:for:)`` for a request whose credential was right: should
    /// the minter refuse (no active key, a uid the vendor refuses), the
    /// request's reservations are given back first, since it is no failure.
    func minterForAProvenUser(_ asked: Asked, for grant: TokenGrant, _ attempt: inout Attempt) async throws
        -> any TokenMinter
    {
        do {
            return try minter(asked, for: grant)
        } catch {
            await attempt.passage.noFault()
            throw error
        }
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

    /// The signatures of `grants` by `minter`, for ``succeed(_:recording:changing:signing:)``.
    func signatures(of grants: [TokenGrant], by minter: any TokenMinter, _ asked: Asked) -> TokenSignatures {
        TokenSignatures(grants, minter: minter, profile: asked.profile, signers: signers)
    }

    /// Writes `issued`, the request's success row, with `session`'s change
    /// (``PublicRequest/succeed(recording:changing:onCountsAllowed:)``),
    /// beginning `signatures` beside the statement where every limit that
    /// counts requests allowed this one in memory; they are discarded when
    /// the row is not written. Returns whether it was (`false`: a rotation
    /// lost its race).
    @discardableResult
    func succeed(
        _ attempt: inout Attempt, recording issued: AuditEvent, changing session: SessionChange?,
        signing signatures: TokenSignatures
    ) async throws -> Bool {
        let made: Bool
        do {
            made = try await attempt.passage.succeed(recording: issued, changing: session, onCountsAllowed: signatures.start)
        } catch {
            signatures.discard()
            throw error
        }
        if !made { signatures.discard() }
        return made
    }

    var issuedAt: Int64 { Int64(now().timeIntervalSince1970) }
}
