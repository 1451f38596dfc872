import Foundation
import GatewayCore
import Synchronization

/// The sessions this replica rotated last, as it left them: so a client that
/// refreshes here again is answered without reading its session first.
///
/// Never an authority. Only a token that is the live one of a remembered
/// session is taken from here (a `rotate` verdict), and the rotation's own
/// statement spends it only while its generation and digest are still the
/// live ones and the session is live (``SessionChangesSQL``): a session
/// another replica rotated, an operator revoked or that has expired makes
/// that statement refuse, and the request reads its session as it would
/// have without this. Any other token (a retry, reuse, an unknown one) is
/// always judged against a fresh reading.
///
/// Bounded: past `capacity` sessions, one remembered is forgotten for each
/// new one, so memory stays flat however many sessions refresh.
final class RecentRotations: Sendable {
    private struct Key: Hashable {
        let appID: AppID
        let sessionID: UUID
    }

    private let sessions: Mutex<[Key: StoredSession]>
    let capacity: Int

    init(capacity: Int = 20_000) {
        self.capacity = capacity
        self.sessions = Mutex([:])
    }

    /// The session `token` names, if remembered with `token` as its live one.
    func session(whoseLiveTokenIs token: RefreshToken, in appID: AppID) -> StoredSession? {
        let remembered = sessions.withLock { $0[Key(appID: appID, sessionID: token.sessionID)] }
        guard let remembered, remembered.generation == token.generation, remembered.tokenDigest == token.digest else {
            return nil
        }
        return remembered
    }

    /// Remembers `session` as its rotation from `spent` to `successor` left it at `now`.
    func remember(_ session: StoredSession, spent: RefreshToken, successor: RefreshToken, idleTimeoutSeconds: Int, now: Date) {
        var rotated = session
        rotated.generation = successor.generation
        rotated.tokenDigest = successor.digest
        rotated.previousDigest = spent.digest
        rotated.rotatedAt = now
        rotated.lastUsedAt = now
        rotated.idleExpiresAt = min(now.addingTimeInterval(Double(idleTimeoutSeconds)), session.expiresAt)
        let key = Key(appID: session.appID, sessionID: session.sessionID)
        sessions.withLock { sessions in
            if sessions.count >= capacity, sessions[key] == nil, let any = sessions.keys.first {
                sessions[any] = nil
            }
            sessions[key] = rotated
        }
    }

    /// Forgets a session this replica saw end or refused.
    func forget(_ sessionID: UUID, in appID: AppID) {
        _ = sessions.withLock { $0.removeValue(forKey: Key(appID: appID, sessionID: sessionID)) }
    }

    var count: Int { sessions.withLock { $0.count } }
}
