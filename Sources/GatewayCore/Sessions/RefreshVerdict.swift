public import Crypto
public import Foundation

/// What a presented refresh token means for its session: the rules of a
/// token family, with no I/O (the model test drives them through random
/// sequences of refreshes, retries, reuse and revocations).
public enum RefreshVerdict: Sendable, Equatable {
    /// The live token: spend it for `successor` (only if it is still the
    /// live one when the spending is written; another replica may have spent
    /// it first).
    case rotate(successor: RefreshToken)
    /// The token spent last, within the grace window: answered with the
    /// successor it was spent for, which is the live token; nothing changes.
    case retry(successor: RefreshToken)
    /// A spent token of this family, past the grace window (or older than
    /// the last): whoever holds it is not the session's only holder. The
    /// session ends, every token of its family with it.
    case reuse
    /// Refused as it is, with the audit reason; nothing changes.
    case refuse(reason: String)

    /// The audit reasons of a refusal.
    public enum Reason {
        public static let malformed = "refresh_token_malformed"
        /// No session of the app has that id, or the token is not of its family.
        public static let unknown = "refresh_token_unknown"
        public static let revoked = "session_revoked"
        public static let expired = "session_expired"
        public static let idle = "session_idle_expired"
        public static let reused = "refresh_token_reused"
        public static let userID = "refresh_token_user_id"
    }

    /// The longest walk forward from a spent token to the live one (one HMAC
    /// a generation); an older token is taken for unknown (refused, the
    /// session kept). Small, because the walk is done for any token under a
    /// real session's id before any limit can refuse it: at 100 000 a forged
    /// token under a session refreshed 3 000 times cost 61-96 ms of CPU, and
    /// one long-lived session was an amplifier against every tenant (issue
    /// 76.4). A stolen token used within 16 refreshes of its theft still ends
    /// the family as reuse; one older signs nobody in.
    public static let longestWalk: UInt32 = 16

    /// The verdict on `token`, presented at `now`, against `session` (the
    /// app's session its id names, `nil` when there is none). `key` derives
    /// successors (``RefreshToken/successor(under:in:)``). Without
    /// `walking`, a token that only a walk could tell from a forged one
    /// (``needsWalk(_:session:)``) is refused as unknown: the caller counts
    /// the refusal against its limits first, then walks, so no HMAC is
    /// spent for a client the limits refuse.
    public static func of(
        _ token: RefreshToken, session: StoredSession?, now: Date, graceSeconds: Int, key: SymmetricKey,
        walking: Bool = true
    ) -> RefreshVerdict {
        guard let session, session.sessionID == token.sessionID else { return .refuse(reason: Reason.unknown) }
        let digest = token.digest
        let isLive = token.generation == session.generation && digest == session.tokenDigest
        let isLast = token.generation &+ 1 == session.generation && session.previousDigest == digest
        // Whether the token is of this family at all: a made-up secret under a real session id ends nothing.
        guard isLive || isLast || (walking && Self.leadsToTheLiveToken(token, session: session, key: key)) else {
            return .refuse(reason: Reason.unknown)
        }
        if let revokedAt = session.revokedAt, revokedAt <= now { return .refuse(reason: Reason.revoked) }
        if now >= session.expiresAt { return .refuse(reason: Reason.expired) }
        if now >= session.idleExpiresAt { return .refuse(reason: Reason.idle) }
        if isLive { return .rotate(successor: token.successor(under: key, in: session.appID)) }
        if isLast, let rotatedAt = session.rotatedAt, now.timeIntervalSince(rotatedAt) <= Double(graceSeconds) {
            return .retry(successor: token.successor(under: key, in: session.appID))
        }
        return .reuse
    }

    /// Whether only a walk forward can tell `token` from a forged one: it is
    /// neither the session's live token nor the one spent last, and at most
    /// ``longestWalk`` generations older than the live one.
    public static func needsWalk(_ token: RefreshToken, session: StoredSession?) -> Bool {
        guard let session, session.sessionID == token.sessionID else { return false }
        let digest = token.digest
        if token.generation == session.generation && digest == session.tokenDigest { return false }
        if token.generation &+ 1 == session.generation && session.previousDigest == digest { return false }
        return token.generation < session.generation && session.generation - token.generation <= longestWalk
    }

    /// Whether deriving forward from `token` (an older generation) reaches the session's live token.
    static func leadsToTheLiveToken(_ token: RefreshToken, session: StoredSession, key: SymmetricKey) -> Bool {
        guard token.generation < session.generation, session.generation - token.generation <= longestWalk else { return false }
        var walked = token
        while walked.generation < session.generation { walked = walked.successor(under: key, in: session.appID) }
        return walked.digest == session.tokenDigest
    }
}
