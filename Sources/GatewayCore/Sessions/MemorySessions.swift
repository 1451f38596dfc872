public import Foundation

/// Sessions kept in memory, each change made as the SQL makes it
/// (`SessionChangesSQL` in GatewayPostgres): the sessions of the in-memory
/// stores the tests run the gateway over. Ended sessions are kept.
public struct MemorySessions: Sendable {
    private var sessions: [AppID: [UUID: StoredSession]] = [:]

    public init() {}

    public func find(_ sessionID: UUID, in appID: AppID) -> StoredSession? {
        sessions[appID]?[sessionID]
    }

    /// The session `sessionID`, whatever its app.
    public func find(_ sessionID: UUID) -> StoredSession? {
        sessions.values.lazy.compactMap { $0[sessionID] }.first
    }

    /// Changes the session `sessionID` as `change` says, outside any rule: a
    /// test moving a session's clock. Returns whether there was such a session.
    @discardableResult
    public mutating func amend(_ sessionID: UUID, _ change: (inout StoredSession) -> Void) -> Bool {
        guard var session = find(sessionID) else { return false }
        change(&session)
        sessions[session.appID]?[sessionID] = session
        return true
    }

    /// The user's sessions, newest first (live ones only unless `includingEnded`).
    public func list(of userID: String, in appID: AppID, includingEnded: Bool, at now: Date) -> [StoredSession] {
        (sessions[appID] ?? [:]).values.filter { $0.userID == userID && (includingEnded || $0.isLive(at: now)) }
            .sorted { ($0.createdAt, $0.sessionID.uuidString) > ($1.createdAt, $1.sessionID.uuidString) }
    }

    /// Makes `change` at `now`; returns whether it was made (a rotation whose
    /// token was still the live one, a revocation of a live session; a start always).
    public mutating func apply(_ change: SessionChange, at now: Date) -> Bool {
        switch change {
        case .start(let start):
            let live = list(of: start.userID, in: start.appID, includingEnded: false, at: now)
            for old in live.dropFirst(start.maximumPerUser - 1) { end(old, reason: "session_limit", at: now) }
            let expires = now + TimeInterval(start.lifetimeSeconds)
            sessions[start.appID, default: [:]][start.sessionID] = StoredSession(
                appID: start.appID, sessionID: start.sessionID, userID: start.userID, profile: start.profile,
                credentialType: start.credentialType, methods: start.methods, authTime: now, deviceLabel: start.deviceLabel,
                createdAt: now, lastUsedAt: now, idleExpiresAt: min(now + TimeInterval(start.idleTimeoutSeconds), expires),
                expiresAt: expires, generation: 0, tokenDigest: start.tokenDigest, previousDigest: nil, rotatedAt: nil,
                revokedAt: nil, revokedReason: nil)
            return true
        case .rotate(let rotation):
            guard var session = find(rotation.sessionID, in: rotation.appID), session.isLive(at: now),
                session.generation == rotation.generation, session.tokenDigest == rotation.tokenDigest
            else { return false }
            session.generation += 1
            session.previousDigest = session.tokenDigest
            session.tokenDigest = rotation.successorDigest
            session.rotatedAt = now
            session.lastUsedAt = now
            session.idleExpiresAt = min(now + TimeInterval(rotation.idleTimeoutSeconds), session.expiresAt)
            sessions[rotation.appID]?[rotation.sessionID] = session
            return true
        case .revoke(let appID, let sessionID, let reason):
            guard let session = find(sessionID, in: appID), session.revokedAt == nil else { return false }
            end(session, reason: reason, at: now)
            return true
        }
    }

    /// Ends the live sessions `scope` names; returns how many.
    public mutating func revoke(_ scope: SessionScope, reason: String, at now: Date) -> Int {
        let ended: [StoredSession]
        switch scope {
        case .session(let sessionID, let appID): ended = find(sessionID, in: appID).map { [$0] } ?? []
        case .user(let userID, let appID): ended = list(of: userID, in: appID, includingEnded: false, at: now)
        case .userExcept(let userID, let kept, let appID):
            ended = list(of: userID, in: appID, includingEnded: false, at: now).filter { $0.sessionID != kept }
        case .signIns(let userID, let credentialType, let appID):
            ended = list(of: userID, in: appID, includingEnded: false, at: now).filter { $0.credentialType == credentialType }
        case .app(let appID): ended = Array((sessions[appID] ?? [:]).values)
        }
        let live = ended.filter { $0.isLive(at: now) }
        for session in live { end(session, reason: reason, at: now) }
        return live.count
    }

    private mutating func end(_ session: StoredSession, reason: String, at now: Date) {
        var ended = session
        ended.revokedAt = now
        ended.revokedReason = reason
        sessions[session.appID]?[session.sessionID] = ended
    }
}
