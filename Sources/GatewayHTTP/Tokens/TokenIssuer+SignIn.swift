import GatewayCore
import GatewayPluginKit
import Tracing

extension TokenIssuer {
    /// A first factor: the credential plugin's verifier decides.
    ///
    /// Limits come before the credential check (failure policies reserve
    /// their unit then, and the issued row's statement gives it back), except
    /// for verifiers that are cheap to ask (``CredentialVerifier/isCheapToAsk``):
    /// their verdict is known first, and the issued row's statement is also
    /// the limits' check, so it is written only if every limit allows. A
    /// request that names no user, or whose credential proves its own user
    /// (``CredentialVerifier/provesItsUser``), is held to the `user_failures`
    /// limit of the user its check found (a provider's ID token's subject): a
    /// failure then counts against them, and a verified attempt is refused
    /// while they are over it. A proof's user is counted apart
    /// (``RateLimitPolicy/provenUserSubject(_:)``): failures of requests that
    /// only named them (wrong passwords) never refuse their passkey. With the app's sessions on, the row's
    /// statement also starts the user's session.
    ///
    /// Where the app asks a human check (``HumanCheckedVerifier``), it is
    /// made once the limits allowed, before the credential is checked.
    ///
    /// A user who owes a second factor (the app's `mfa`) gets a ticket for
    /// it instead of a token: the row (`token.denied`, `mfa_required`) is
    /// written as a success's would be, under the same limits. The ticket
    /// is kept, then the verifier asked about its user once more
    /// (``CredentialVerifier/lapse(of:in:)``): a user changed meanwhile is
    /// refused, 401 with the change as the row's reason, and the ticket,
    /// never shown, completes nothing.
    func signIn(_ asked: Asked, verifier: any CredentialVerifier, _ attempt: inout Attempt) async throws -> SignedIn {
        let (tokenRequest, credentials) = (asked.tokenRequest, asked.credentials)
        var subjects = verifier.rateLimitSubjects(for: credentials)
        subjects[RateLimitPolicy.app.name] = "*"
        let app = asked.tenant.settings
        try await attempt.passage.limits(
            subjects, claim: .init(namedUser: tokenRequest.userID, provesItsUser: verifier.provesItsUser))
        if let checked = verifier as? any HumanCheckedVerifier {
            do {
                try await checked.checkHuman(credentials, &attempt.passage)
            } catch {
                // Not the credential's failure: nothing counts against the user.
                await attempt.passage.noFault()
                throw error
            }
        }

        let attemptToVerify = CredentialAttempt(
            app: app, userID: tokenRequest.userID, credentials: credentials, requestID: asked.requestID,
            nonce: tokenRequest.nonce)
        let verdict = try await Spans.run(
            "credential check", attributes: Self.credentialAttributes(credentials.type, userID: tokenRequest.userID)
        ) { span in
            let verdict = try await verifier.verify(attemptToVerify)
            span?.attributes["gateway.credential.verdict"] = verdict.label
            return verdict
        }
        let identity: VerifiedIdentity
        switch verdict {
        case .verified(let verified):
            identity = verified
            try await attempt.passage.verdict(.verified(userID: verified.userID))
        case .rejected(let reason, let userID):
            try await attempt.passage.verdict(.rejected(userID: userID))
            attempt.passage.row.reason = reason
            throw GatewayError.invalidCredentials
        case .undecided(let reason):
            try await attempt.passage.verdict(.rejected(userID: nil))
            attempt.passage.row.reason = reason
            throw GatewayError(
                .credentialServiceUnavailable, .upstreamFailure,
                "The service that checks these credentials did not answer; retry in a moment.")
        }
        let grant = TokenGrant(
            app: app, identity: identity, nonce: tokenRequest.nonce, issuedAt: issuedAt,
            methods: identity.methods ?? verifier.authenticationMethods)
        let minter = try await minterForAProvenUser(asked, for: grant, &attempt)

        if let mfa = app.mfa {
            let demand = try await secondFactors.demand(
                mfa, credentialType: credentials.type, signInMethods: identity.methods, userID: identity.userID, in: app.appID)
            if demand != .nothing {
                let challenge = try await secondFactors.challenge(demand, settings: mfa) { ticket in
                    MFATicketGrant(
                        digest: ticket.digest, appID: app.appID, userID: identity.userID, nonce: tokenRequest.nonce,
                        credentialType: credentials.type, methods: grant.methods, profile: identity.profile,
                        deviceLabel: tokenRequest.deviceLabel)
                }
                attempt.passage.row.userID = identity.userID
                // A change of the user that committed while this sign-in ran (deleted, disabled, a new password)
                // ended the tickets it found, not this one, kept after it: ask once more, before the ticket is shown.
                if let lapsed = try await verifier.lapse(of: identity, in: app) { try await attempt.passage.lapsed(lapsed) }
                var row = attempt.passage.row
                row.reason = demand == .enrolment ? SecondFactorRefusal.enrolmentRequired : SecondFactorRefusal.required
                // The ticket is kept before its row, and shown only once the row is written under the same limits as a token's.
                try await attempt.passage.succeed(recording: row)
                return .secondFactorRequired(challenge, row: row)
            }
        }

        var issued = issuedRow(attempt, userID: identity.userID, minter: minter, profile: asked.profile)
        let started = app.sessions.map { settings in
            sessions.start(
                for: identity, in: app, credentialType: credentials.type, methods: grant.methods,
                deviceLabel: tokenRequest.deviceLabel, settings: settings)
        }
        if let started { issued.detail["session_id"] = started.issued.sessionID.lowercasedText }
        let signing = signatures(of: [grant], by: minter, asked)
        try await succeed(
            &attempt, recording: issued, changing: started.map { SessionChange.start($0.change) }, signing: signing)
        if let started { try await endIfLapsed(started.issued, of: identity, verifier: verifier, app: app, &attempt) }
        return .ready(Ready(issued: issued, signatures: signing, session: started?.issued))
    }

    /// Ends the session a sign-in just started when `verifier` no longer
    /// vouches for its user (``CredentialVerifier/lapse(of:in:)``): the
    /// user was deleted, disabled or given a new password while the sign-in
    /// ran, after its check but before its session was written, so the
    /// admin's ending of their sessions missed this one. It ends as that would have ended it, with a
    /// `session.revoked` row naming the reason; the answer stands (it is
    /// the sign-in that came first), its refresh token already refused.
    func endIfLapsed(
        _ session: IssuedSession, of identity: VerifiedIdentity, verifier: any CredentialVerifier, app: AppSettings,
        _ attempt: inout Attempt
    ) async throws {
        guard let reason = try await verifier.lapse(of: identity, in: app) else { return }
        var ended = attempt.passage.row
        ended.event = "session.revoked"
        ended.outcome = .success
        ended.userID = identity.userID
        ended.reason = nil
        ended.detail["session_id"] = session.sessionID.lowercasedText
        ended.detail["reason"] = reason
        try await attempt.passage.record(ended, changing: .revoke(appID: app.appID, sessionID: session.sessionID, reason: reason))
    }

    static func credentialAttributes(_ type: String, userID: String?) -> SpanAttributes {
        var attributes: SpanAttributes = ["gateway.credential.type": .string(type)]
        if Spans.recordsUserIDs, let userID { attributes["enduser.id"] = userID }
        return attributes
    }
}
