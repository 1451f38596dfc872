import Foundation
import GatewayCore
import GatewayPluginKit

extension TokenIssuer {
    /// A refresh: `{"type": "refresh_token", "refresh_token": "rt1...."}`
    /// (``RefreshVerdict`` says what the token means for its session).
    ///
    /// The verdict comes before the limits, from one read of the session,
    /// or none when this replica rotated the session last and the token is
    /// the live one it left (``RecentRotations``): a refresh then costs one
    /// statement, the counters, its row and the spending of its token
    /// together, which is written only if every limit allows and the token
    /// is still the live one of a live session. When it is not (another
    /// request spent it first, a retry racing its original, another replica,
    /// or the session ended), the session is read again, and the request is
    /// then judged on that reading: a retry within the grace window is
    /// answered with the same successor.
    ///
    /// It counts against `ip` and `app`, a refused one also against
    /// `refresh_failures` (the client's refused refreshes: past it, a client
    /// gets 429 for every token that would be refused, and learns nothing
    /// more; a live token still refreshes, since it cannot have been
    /// guessed). It never counts against a user: it names none before its
    /// proof holds, and a user's failed passwords do not stop their session.
    /// An unknown, spent, ended or malformed token is refused alike: 401
    /// `invalid_credentials`, its row naming why. A spent token past the
    /// grace window ends its session (its whole family), with a
    /// `session.reuse_detected` row.
    ///
    /// A refresh with `additional_nonces` is answered a token for each of
    /// them too, from the same rotation: one row (its `detail.additional_tokens`
    /// says how many more), one count under the limits, one successor. A
    /// client holding several challenges at once answers them all with one
    /// request, so none of them races the others' rotation.
    func refresh(_ asked: Asked, settings: SessionSettings, _ attempt: inout Attempt) async throws -> Ready {
        let app = asked.tenant.settings
        let presented = asked.credentials.fields["refresh_token"]
        var remembered = sessions.rememberedVerdict(on: presented, in: app, settings: settings)
        try await attempt.passage.limits([RateLimitPolicy.app.name: "*"])
        // The remembered verdict if any, then up to three readings.
        for _ in 0..<(remembered == nil ? 3 : 4) {
            // A storage failure is answered 503 (`ErrorResponder`), never a refusal.
            let reading: RefreshReading
            if let known = remembered {
                (reading, remembered) = (known, nil)
            } else {
                reading = try await sessions.verdict(on: presented, in: app, settings: settings, walking: false)
            }
            if let session = reading.session { attempt.passage.row.detail["session_id"] = session.sessionID.lowercasedText }
            let successor: RefreshToken
            let rotates: Bool
            switch reading.verdict {
            case .refuse(let reason):
                try await refuse(reason, reading: reading, settings: settings, app: app, &attempt)
            case .reuse:
                try await attempt.passage.holderRefused()
                attempt.passage.row.reason = try await endForReuse(reading, app: app, &attempt)
                throw GatewayError.invalidCredentials
            case .rotate(let next):
                (successor, rotates) = (next, true)
            case .retry(let next):
                (successor, rotates) = (next, false)
            }
            guard let session = reading.session, let spent = reading.token else { throw GatewayError.internalError }
            attempt.passage.row.userID = session.userID
            if let named = asked.tokenRequest.userID, named != session.userID {
                try await refuse(RefreshVerdict.Reason.userID, reading: nil, settings: settings, app: app, &attempt)
            }
            let grant = TokenGrant(
                app: app, identity: VerifiedIdentity(userID: session.userID, profile: session.profile),
                nonce: asked.tokenRequest.nonce, issuedAt: issuedAt, authTime: Int64(session.authTime.timeIntervalSince1970),
                methods: session.methods)
            let minter = try self.minter(asked, for: grant)
            let additionalGrants = asked.tokenRequest.additionalNonces.map { nonce in
                TokenGrant(
                    app: app, identity: grant.identity, nonce: nonce, issuedAt: grant.issuedAt, authTime: grant.authTime,
                    methods: grant.methods)
            }
            for additional in additionalGrants {
                if let refusal = minter.refusal(for: additional) { throw refusal }
            }
            var issued = issuedRow(attempt, userID: session.userID, minter: minter, profile: asked.profile)
            issued.detail["session"] = rotates ? "refreshed" : "retried"
            if !additionalGrants.isEmpty { issued.detail["additional_tokens"] = String(additionalGrants.count) }
            let change = rotates ? SessionChange.rotate(
                SessionRotation(
                    appID: app.appID, sessionID: session.sessionID, generation: spent.generation,
                    tokenDigest: spent.digest, successorDigest: successor.digest,
                    idleTimeoutSeconds: settings.idleTimeoutSeconds)) : nil
            let signing = signatures(of: [grant] + additionalGrants, by: minter, asked)
            guard try await succeed(&attempt, recording: issued, changing: change, signing: signing) else {
                // Spent by another request meanwhile, or its session ended: read again, without counting again.
                sessions.recent.forget(session.sessionID, in: app.appID)
                continue
            }
            if rotates {
                sessions.recent.remember(
                    session, spent: spent, successor: successor, idleTimeoutSeconds: settings.idleTimeoutSeconds,
                    now: reading.now)
            }
            let left = session.expiresAt.timeIntervalSince(reading.now)
            let expiresIn = max(0, min(settings.idleTimeoutSeconds, Int(left.rounded(.down))))
            return Ready(
                issued: issued, signatures: signing,
                session: IssuedSession(refreshToken: successor, expiresInSeconds: expiresIn))
        }
        // Three readings, each spent by another request before this one's statement: not a race a client makes.
        throw GatewayError.unavailable
    }

    /// Counts the refused refresh against the client's `refresh_failures`
    /// (the 429 when it is over) and throws the 401 its row names `reason` for.
    /// Only then, for a `reading` made without its walk, the walk: an older
    /// token of the family is reuse after all (its session ends), a forged
    /// one stays refused. So a forged token costs no HMAC for a client its
    /// limits refuse, and at most ``RefreshVerdict/longestWalk`` for one they allow.
    private func refuse(
        _ reason: String, reading: RefreshReading?, settings: SessionSettings, app: AppSettings, _ attempt: inout Attempt
    ) async throws -> Never {
        try await attempt.passage.holderRefused()
        attempt.passage.row.reason = reason
        if let reading, reading.needsWalk {
            switch sessions.walked(reading, settings: settings).verdict {
            case .reuse: attempt.passage.row.reason = try await endForReuse(reading, app: app, &attempt)
            case .refuse(let walked): attempt.passage.row.reason = walked
            case .rotate, .retry: break  // an older token is never the live one
            }
        }
        throw GatewayError.invalidCredentials
    }

    /// A spent token presented past the grace window, its refusal counted
    /// or about to be: its session ends, with a `session.reuse_detected`
    /// row. Returns the refusal's reason.
    private func endForReuse(_ reading: RefreshReading, app: AppSettings, _ attempt: inout Attempt) async throws -> String {
        if let session = reading.session, let token = reading.token {
            sessions.recent.forget(session.sessionID, in: app.appID)
            var detected = attempt.passage.row
            detected.event = "session.reuse_detected"
            detected.userID = session.userID
            detected.detail["session_id"] = session.sessionID.lowercasedText
            detected.detail["generation"] = "\(token.generation)"
            detected.detail["live_generation"] = "\(session.generation)"
            try await attempt.passage.record(
                detected, changing: .revoke(appID: app.appID, sessionID: session.sessionID, reason: "reuse_detected"))
        }
        return RefreshVerdict.Reason.reused
    }
}
