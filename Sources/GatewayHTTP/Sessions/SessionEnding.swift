import GatewayCore
import GatewayPluginKit

/// What a user's change does to their sessions (``UserLifecycle``): all
/// of them end (a new address ends none), each with its `session.revoked` row, except that a new
/// password ends them only where the app's `sessions.revoke_on_password_change`
/// is on, and a change that keeps the session that made it (a user's own
/// new password) leaves that one. The row's reason is the change's, `admin` where an admin ended
/// every session.
struct SessionEnding: Sendable {
    let apps: any AppStore
    let sessions: any SessionStore

    var hearer: UserLifecycle.Hearer {
        { [apps, sessions] change in
            if change.kind == .emailChanged { return 0 }
            if change.kind == .passwordChanged {
                guard try await apps.find(change.appID)?.settings.sessions?.revokeOnPasswordChange ?? false else { return 0 }
            }
            let row = AuditEvent(
                appID: change.appID, event: "session.revoked", outcome: .success, userID: change.userID,
                credentialType: RefreshToken.credentialType, requestID: change.requestID, actor: change.actor)
            let reason = change.kind == .sessionsEnded ? Self.adminReason : change.reason
            let scope: SessionScope =
                if let kept = change.keepingSession {
                    .userExcept(change.userID, keeping: kept, in: change.appID)
                } else {
                    .user(change.userID, in: change.appID)
                }
            return try await sessions.revoke(scope, reason: reason, recording: row)
        }
    }

    /// The reason of a session an admin ended (one, a user's, an app's).
    static let adminReason = "admin"
}
