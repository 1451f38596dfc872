import Foundation

// Answering challenges: what an app calls on every Layer challenge, the
// gathering of challenges that come together into one refresh, and the
// refresh itself with its retries. The lane, the store and the epoch it
// relies on are GatewayClient.swift's.

extension GatewayClient {
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
}
