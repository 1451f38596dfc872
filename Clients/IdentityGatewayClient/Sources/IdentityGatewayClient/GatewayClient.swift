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
    private var epoch = 0
    /// The lane: whether a session call is running, and who waits, in order.
    private var laneBusy = false
    private var laneWaiters: [CheckedContinuation<Void, Never>] = []
    /// A 429's `Retry-After`: calls fail at once until it passes.
    private var quietUntil: ContinuousClock.Instant?
    /// Challenges waiting for a refresh to answer them, in the order they came.
    private var waiting: [WaitingChallenge] = []
    /// Whether a task is sending refreshes for ``waiting``.
    private var gathering = false

    /// One ``identityToken(forNonce:profile:)`` call waiting for its token.
    private struct WaitingChallenge {
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

    // MARK: Answering challenges

    /// A token for `nonce`, minted with the stored session: what the app
    /// calls in `layerClient(_:didReceiveAuthenticationChallengeWithNonce:)`,
    /// and whenever another SDK's token must be renewed.
    ///
    /// Calls that come within ``GatewayClientConfiguration/refreshGatheringWindow``
    /// of each other (and ask the same profile) are answered by one refresh
    /// that carries all their nonces; one refresh is in flight at a time,
    /// and calls that come while it is are answered by the next. A
    /// refresh whose answer is lost is sent again with the same token
    /// (the gateway answers the same successor within its grace window)
    /// until ``GatewayClientConfiguration/refreshRetryWindow`` has passed.
    /// The successor is stored before the token is returned.
    ///
    /// - Throws: ``IdentityGatewayError/signedOut`` when there is no session
    ///   or the gateway refused it (it is removed), or when a sign-out or
    ///   another sign-in came while this was answered;
    ///   ``IdentityGatewayError/network(_:)``, ``IdentityGatewayError/rateLimited(retryAfter:)``,
    ///   ``IdentityGatewayError/unavailable(code:retryAfter:)`` with the session kept;
    ///   ``IdentityGatewayError/storage(_:)`` when the successor could not be stored.
    public func identityToken(forNonce nonce: String, profile: TokenProfile? = nil) async throws(IdentityGatewayError) -> IdentityToken {
        let profile = profile ?? configuration.tokenProfile
        let result = await withCheckedContinuation { answer in
            waiting.append(WaitingChallenge(nonce: nonce, profile: profile, answer: answer))
            if !gathering {
                gathering = true
                Task { await self.answerWaitingChallenges() }
            }
        }
        return try result.get()
    }

    /// Sends refreshes until no challenge waits: each after the gathering
    /// window, for the first waiting challenge's profile and every other
    /// waiting one of that profile (up to ``noncesPerRefresh``).
    private func answerWaitingChallenges() async {
        while !waiting.isEmpty {
            try? await Task.sleep(for: configuration.refreshGatheringWindow)
            let profile = waiting[0].profile
            var batch: [WaitingChallenge] = []
            var rest: [WaitingChallenge] = []
            for challenge in waiting {
                if challenge.profile == profile && batch.count < Self.noncesPerRefresh { batch.append(challenge) } else { rest.append(challenge) }
            }
            waiting = rest
            let nonces = batch.map(\.nonce)
            let result: Result<[IdentityToken], IdentityGatewayError>
            do {
                result = .success(
                    try await inLane { () async throws(IdentityGatewayError) -> [IdentityToken] in
                        do {
                            return try await self.store.exclusively { try await self.refresh(nonces: nonces, profile: profile) }
                        } catch let error as IdentityGatewayError {
                            throw error
                        } catch {
                            throw .storage("the session store could not be locked: \(error)")
                        }
                    })
            } catch {
                result = .failure(error)
            }
            for (index, challenge) in batch.enumerated() {
                challenge.answer.resume(returning: result.map { $0[index] })
            }
        }
        gathering = false
    }

    /// One refresh answering `nonces` (the first as the request's `nonce`,
    /// the rest as `additional_nonces`), a token for each in their order.
    private func refresh(nonces: [String], profile: TokenProfile?) async throws(IdentityGatewayError) -> [IdentityToken] {
        let nonce = nonces[0]
        try checkQuiet()
        let started = epoch
        guard var session = try await loadSession() else { throw .signedOut }
        guard epoch == started else { throw .signedOut }
        let deadline = ContinuousClock.now + configuration.refreshRetryWindow
        var pause = Duration.milliseconds(200)
        var adoptedAnotherProcessToken = false
        while true {
            let body = RequestBody.Token(
                app_id: configuration.appID, user_id: nil, nonce: nonce,
                credentials: ["type": "refresh_token", "refresh_token": session.refreshToken],
                token_profile: profile?.rawValue, device_label: nil,
                additional_nonces: nonces.count > 1 ? Array(nonces.dropFirst()) : nil)
            let answer: GatewayAPI.Answer
            do {
                answer = try await api.post("v1/identity_tokens", body)
            } catch .network(let why) {
                // The gateway may have rotated the session and the answer been lost: the same token
                // again is answered the same successor within its grace window, and nothing else changes.
                guard epoch == started else { throw .signedOut }
                guard !Task.isCancelled else { throw .network("cancelled") }
                guard ContinuousClock.now + pause < deadline else { throw .network(why) }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(2))
                continue
            } catch {
                throw error
            }
            guard epoch == started else { throw .signedOut }
            if answer.isSuccess {
                let minted = try GatewayAPI.decode(GatewayAPI.Minted.self, from: answer)
                guard let successor = minted.refresh_token else {
                    throw .unexpectedAnswer("a refresh answered no refresh token")
                }
                var next = session
                next.refreshToken = successor
                next.refreshTokenExpiresAt = Date().addingTimeInterval(TimeInterval(minted.refresh_token_expires_in ?? 0))
                do {
                    // False when another process over the store refreshed meanwhile and stored a newer
                    // token: that one is kept, and this token is as good.
                    _ = try await store.save(next, replacing: session.refreshToken)
                } catch {
                    throw .storage("the session's new refresh token could not be stored: \(error)")
                }
                guard epoch == started else {
                    // Signed out (or in as someone else) while it was stored: take it back.
                    try? await store.remove(ifHolding: successor)
                    throw .signedOut
                }
                let tokens = [minted.identity_token] + (minted.additional_identity_tokens ?? [])
                guard tokens.count == nonces.count else {
                    throw .unexpectedAnswer("a refresh for \(nonces.count) nonces answered \(tokens.count) tokens")
                }
                return zip(tokens, nonces).map { IdentityToken(token: $0, profile: Self.profile(of: minted), nonce: $1) }
            }
            let refusal = GatewayAPI.refusal(of: answer)
            switch refusal {
            case .invalidCredentials:
                // Another process over the same store (a widget) may have refreshed first: its successor
                // is the live token now. Otherwise the session is over.
                if !adoptedAnotherProcessToken, let current = try await loadSession(), epoch == started,
                    current.sessionID == session.sessionID, current.refreshToken != session.refreshToken
                {
                    session = current
                    adoptedAnotherProcessToken = true
                    continue
                }
                try? await store.remove(ifHolding: session.refreshToken)
                throw .signedOut
            case .rateLimited(let retryAfter):
                quietUntil = ContinuousClock.now + retryAfter
                throw refusal
            default:
                throw refusal
            }
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

    private static func profile(of minted: GatewayAPI.Minted) -> TokenProfile {
        minted.token_profile.map(TokenProfile.init(rawValue:)) ?? .layer
    }
}
