public import Foundation

/// The sessions, as the token path reads them and the admin API and the
/// sign-out route end them. Writes made with a token's row go through the
/// request ledger (``SessionChange``); these are the others.
public protocol SessionStore: Sendable {
    /// The app's session with that id, ended or not, and the storage's
    /// clock at the reading (the clock its times were written by, so a
    /// verdict does not depend on the gateway's clock agreeing with it).
    func find(_ sessionID: UUID, in appID: AppID) async throws -> SessionLookup

    /// The user's sessions, newest first: the live ones, and the ended ones
    /// too with `includingEnded`.
    func list(of userID: String, in appID: AppID, includingEnded: Bool, at now: Date) async throws -> [StoredSession]

    /// Ends the live sessions `scope` names, with `row` in the same
    /// transaction (its detail gains `revoked`, how many, and `reason`; no
    /// row when one session was named and it was not live); returns how many ended.
    func revoke(_ scope: SessionScope, reason: String, recording row: AuditEvent) async throws -> Int
}

/// A session as read, and the storage's clock when it was.
public struct SessionLookup: Sendable {
    public let session: StoredSession?
    public let now: Date

    public init(session: StoredSession?, now: Date) {
        self.session = session
        self.now = now
    }
}

/// Which sessions a revocation ends.
public enum SessionScope: Sendable, Equatable {
    case session(UUID, in: AppID)
    case user(String, in: AppID)
    /// The user's sessions but one (the session that changed their password).
    case userExcept(String, keeping: UUID, in: AppID)
    /// The user's sessions that began with one credential type (a phone
    /// code's, once the user has no number left).
    case signIns(of: String, by: String, in: AppID)
    case app(AppID)
}
