import Foundation

/// One app's client of the identity gateway: signs the user in, keeps the
/// session in its ``SessionStore``, and answers each authentication
/// challenge with ``identityToken(forNonce:profile:)``.
///
/// Every call that uses the stored session (a refresh, sign-out's
/// revocation, the account routes) waits its turn in one lane, so one
/// refresh is in flight at a time however many callers ask. Challenges
/// that arrive together share one refresh: the gateway answers each nonce
/// from one rotation (``GatewayClientConfiguration/refreshGatheringWindow``).
/// A sign-in or sign-out
/// does not wait: it starts a new *epoch*, and an answer that comes back
/// for an earlier epoch is discarded (its caller gets
/// ``IdentityGatewayError/signedOut``), never stored over the new session.
public actor GatewayClient {
    /// Where the gateway is and which app this client signs in to.
    public nonisolated let configuration: GatewayClientConfiguration
    let store: any SessionStore
    let api: GatewayAPI
    /// Bumped by every sign-in and sign-out; an answer for an earlier epoch is not stored.
    var epoch = 0
    /// The lane: whether a session call is running, and who waits, in order.
    private var laneBusy = false
    private var laneWaiters: [CheckedContinuation<Void, Never>] = []
    /// A 429's `Retry-After`: calls fail at once until it passes.
    var quietUntil: ContinuousClock.Instant?
    /// Challenges waiting for a refresh to answer them, in the order they came.
    var waiting: [WaitingChallenge] = []
    /// Whether a task is sending refreshes for ``waiting``.
    var gathering = false

    /// One ``identityToken(forNonce:profile:)`` call waiting for its token.
    struct WaitingChallenge {
        let nonce: String
        let profile: TokenProfile?
        let answer: CheckedContinuation<Result<IdentityToken, IdentityGatewayError>, Never>
    }

    /// The most nonces one refresh carries (the gateway's limit: one and 63 more).
    static let noncesPerRefresh = 64

    /// A client of the app `configuration` names, keeping its session in
    /// `store` (``KeychainSessionStore`` on Apple platforms,
    /// ``FileSessionStore`` elsewhere) and speaking through `transport`.
    public init(
        configuration: GatewayClientConfiguration, store: any SessionStore,
        transport: any HTTPTransport = URLSessionTransport()
    ) {
        self.configuration = configuration
        self.store = store
        self.api = GatewayAPI(configuration: configuration, transport: transport)
    }

    // MARK: Signing in and out

    /// Signs in with `credential`, answering `nonce` (the challenge's, or any
    /// fresh value when there is no challenge yet). Where the app keeps
    /// sessions, the new session replaces any stored one before this returns.
    /// - Parameter userID: the user, where the credential needs one named
    ///   (passwords, static users, a webhook's); `nil` where the credential
    ///   proves it (a code, an ID token, a passkey).
    public func signIn(
        userID: String?, credential: Credential, nonce: String, profile: TokenProfile? = nil
    ) async throws(IdentityGatewayError) -> SignInResult {
        try checkQuiet()
        let profile = profile ?? configuration.tokenProfile
        let body = RequestBody.Token(
            app_id: configuration.appID, user_id: userID, nonce: nonce, credentials: credential.fields.merging(["type": credential.type]) { _, type in type },
            token_profile: profile?.rawValue, device_label: configuration.deviceLabel)
        let answer = try await api.post("v1/identity_tokens", body)
        if answer.status == 403, let refusal = try? JSONDecoder().decode(GatewayAPI.Refusal.self, from: answer.body),
            let ticket = refusal.mfa_ticket
        {
            return .secondFactorRequired(
                SecondFactorChallenge(
                    ticket: ticket, expiresIn: .seconds(refusal.mfa_ticket_expires_in ?? 0), methods: refusal.mfa_methods ?? [],
                    needsEnrollment: refusal.error == "mfa_enrollment_required", nonce: nonce, userID: userID,
                    tokenProfile: profile))
        }
        return .signedIn(try await startSession(from: answer, userID: userID, nonce: nonce))
    }

    /// Completes a sign-in that asked for a second factor, with the code of
    /// the user's authenticator or one of their recovery codes.
    public func completeSignIn(
        _ challenge: SecondFactorChallenge, with proof: SecondFactorProof
    ) async throws(IdentityGatewayError) -> IdentityToken {
        try checkQuiet()
        let body = RequestBody.Token(
            app_id: configuration.appID, user_id: challenge.userID, nonce: challenge.nonce,
            credentials: ["type": proof.fields.type, "mfa_ticket": challenge.ticket, "code": proof.fields.code],
            token_profile: challenge.tokenProfile?.rawValue, device_label: configuration.deviceLabel)
        let answer = try await api.post("v1/identity_tokens", body)
        return try await startSession(from: answer, userID: challenge.userID, nonce: challenge.nonce)
    }

    /// Ends the session: removes it from the store at once (an answer still
    /// on its way for it is discarded), then asks the gateway to end it
    /// (any token of its family ends it, so a refresh in flight cannot
    /// revive it). Returns whether the gateway heard it; when it did not
    /// (no network), the session ends there at its idle timeout. Throws
    /// only when the store could not remove it.
    @discardableResult
    public func signOut() async throws(IdentityGatewayError) -> Bool {
        epoch += 1
        let stored = try? await store.load()
        do {
            try await store.remove(ifHolding: nil)
        } catch {
            throw .storage("the session could not be removed: \(error)")
        }
        guard let stored else { return true }
        let body = RequestBody.SessionOnly(app_id: configuration.appID, refresh_token: stored.refreshToken)
        guard let answer = try? await api.post("v1/sessions/revoke", body) else { return false }
        return answer.isSuccess
    }

    /// The session the client holds, if any (read from the store).
    public func session() async throws(IdentityGatewayError) -> SessionSummary? {
        try await loadSession().map {
            SessionSummary(sessionID: $0.sessionID, userID: $0.userID, refreshTokenExpiresAt: $0.refreshTokenExpiresAt)
        }
    }

    // MARK: Codes

    /// Sends a sign-in code by SMS to `phoneNumber` (E.164, `+15551234567`).
    /// Answered alike whether or not the number belongs to anybody.
    public func requestPhoneCode(to phoneNumber: String) async throws(IdentityGatewayError) -> CodeSent {
        try checkQuiet()
        return try codeSent(
            try await api.post("v1/phone_codes", RequestBody.Phone(app_id: configuration.appID, phone_number: phoneNumber)))
    }

    /// Sends a sign-in code by email to `email`, in `locale` where the app has it.
    /// Answered alike whether or not the address belongs to anybody.
    public func requestEmailCode(to email: String, locale: String? = nil) async throws(IdentityGatewayError) -> CodeSent {
        try checkQuiet()
        return try codeSent(
            try await api.post("v1/email_codes", RequestBody.Email(app_id: configuration.appID, email: email, locale: locale)))
    }

    /// A passkey sign-in's options: hand them to the platform's
    /// authenticator, and sign in with ``Credential/passkey(_:)``.
    public func passkeyRequestOptions() async throws(IdentityGatewayError) -> PasskeyRequestOptions {
        try checkQuiet()
        let answer = try await api.post("v1/passkeys/authentication_options", RequestBody.AppOnly(app_id: configuration.appID))
        let options = try succeeded(answer, as: AnswerBody.PasskeyOptions.self)
        guard let challenge = Base64URL.decode(options.challenge) else {
            throw .unexpectedAnswer("the passkey challenge is not base64url")
        }
        return PasskeyRequestOptions(
            challenge: challenge, relyingPartyID: options.rpId, timeout: .milliseconds(options.timeout),
            userVerification: options.userVerification)
    }

    // MARK: The lane, the store, answers

    /// Runs `work` once every session call before it has finished.
    func inLane<T: Sendable>(
        _ work: () async throws(IdentityGatewayError) -> T
    ) async throws(IdentityGatewayError) -> T {
        if laneBusy {
            await withCheckedContinuation { laneWaiters.append($0) }
        } else {
            laneBusy = true
        }
        defer {
            if laneWaiters.isEmpty { laneBusy = false } else { laneWaiters.removeFirst().resume() }
        }
        return try await work()
    }

    /// Runs a route that takes the live session without spending it, in
    /// the lane: `body` makes its request from the stored session, `read`
    /// reads its answer. A 401 there is the route's (a wrong current
    /// password), so it does not end the session.
    func sessionCall<Body: Encodable & Sendable, T: Sendable>(
        _ path: String, _ body: (StoredSession) -> Body,
        read: (GatewayAPI.Answer, StoredSession) async throws(IdentityGatewayError) -> T
    ) async throws(IdentityGatewayError) -> T {
        try await inLane { () async throws(IdentityGatewayError) -> T in
            try self.checkQuiet()
            guard let session = try await self.loadSession() else { throw .signedOut }
            return try await read(try await self.api.post(path, body(session)), session)
        }
    }

    /// Removes `session` (while it is the stored one), as after the account's deletion.
    func forget(_ session: StoredSession) async throws(IdentityGatewayError) {
        epoch += 1
        do {
            try await store.remove(ifHolding: session.refreshToken)
        } catch {
            throw .storage("the session could not be removed: \(error)")
        }
    }

    func loadSession() async throws(IdentityGatewayError) -> StoredSession? {
        do {
            return try await store.load()
        } catch {
            throw .storage("the session could not be read: \(error)")
        }
    }

    func checkQuiet() throws(IdentityGatewayError) {
        guard let quietUntil else { return }
        let left = quietUntil - ContinuousClock.now
        if left > .zero { throw .rateLimited(retryAfter: left) }
        self.quietUntil = nil
    }

    /// The token of a sign-in's answer; where it began a session, that
    /// session is stored (replacing any other) before the token is returned.
    private func startSession(
        from answer: GatewayAPI.Answer, userID: String?, nonce: String
    ) async throws(IdentityGatewayError) -> IdentityToken {
        let minted = try succeeded(answer, as: GatewayAPI.Minted.self)
        epoch += 1
        let token = IdentityToken(token: minted.identity_token, profile: Self.profile(of: minted), nonce: nonce)
        do {
            if let refreshToken = minted.refresh_token, let sessionID = minted.session_id {
                _ = try await store.save(
                    StoredSession(
                        appID: configuration.appID, sessionID: sessionID, userID: userID ?? TokenSubject.read(from: token),
                        refreshToken: refreshToken,
                        refreshTokenExpiresAt: Date().addingTimeInterval(TimeInterval(minted.refresh_token_expires_in ?? 0))),
                    replacing: nil)
            } else {
                // The app keeps no sessions: whatever was stored is another sign-in's.
                try await store.remove(ifHolding: nil)
            }
        } catch {
            throw .storage("the new session could not be stored: \(error)")
        }
        return token
    }

    /// `answer`'s body as `T` when it succeeded; its refusal otherwise (a
    /// `Retry-After` quiets the client until it passes).
    func succeeded<T: Decodable>(_ answer: GatewayAPI.Answer, as type: T.Type) throws(IdentityGatewayError) -> T {
        guard answer.isSuccess else { throw refused(answer) }
        return try GatewayAPI.decode(T.self, from: answer)
    }

    func refused(_ answer: GatewayAPI.Answer) -> IdentityGatewayError {
        let refusal = GatewayAPI.refusal(of: answer)
        if case .rateLimited(let retryAfter) = refusal { quietUntil = ContinuousClock.now + retryAfter }
        return refusal
    }

    func codeSent(_ answer: GatewayAPI.Answer) throws(IdentityGatewayError) -> CodeSent {
        let sent = try succeeded(answer, as: AnswerBody.CodeSent.self)
        return CodeSent(expiresIn: .seconds(sent.expires_in), resendAfter: .seconds(sent.resend_after))
    }

    static func profile(of minted: GatewayAPI.Minted) -> TokenProfile {
        minted.token_profile.map(TokenProfile.init(rawValue:)) ?? .layer
    }
}
