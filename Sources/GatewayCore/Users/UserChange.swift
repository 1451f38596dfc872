public import Foundation

/// A change to one user of one app that everything holding something of
/// theirs must hear: their sessions and sign-in tickets, their second
/// factor, and what each plugin keeps under their id (passkeys, bound
/// numbers). Made by whichever route changed the user (the admin API's
/// PUT, PATCH, DELETE and import, the console through it, an admin ending
/// every session, the self-service routes) and handed to one
/// `UserLifecycle` (GatewayPluginKit). Its entry in the
/// ``UserChangeJournal`` commits in the same transaction as the directory
/// write that made it, so no change is made without what its holders must
/// hear of it.
public struct UserChange: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// The user is gone from their directory: everything of theirs goes.
        case deleted = "user_deleted"
        /// The user may not sign in: their sessions and tickets end.
        case disabled = "user_disabled"
        /// A new password: tickets end, and sessions where the app's
        /// `sessions.revoke_on_password_change` is on.
        case passwordChanged = "password_changed"
        /// An admin ended every session of the user (`DELETE .../users/{user_id}/sessions`).
        case sessionsEnded = "sessions_ended"
        /// The user's address is another now (their own change, confirmed
        /// by a code sent there): codes on the way to the old one die.
        case emailChanged = "email_changed"
    }

    /// Its entry in the journal.
    public let id: UUID
    public let kind: Kind
    public let appID: AppID
    public let userID: String
    /// The request that made the change, named by every row it causes.
    public let requestID: String
    /// The admin who sent it, if one did.
    public let actor: UUID?
    /// The session that made the change, which it leaves live (a user who
    /// sets a new password keeps the session they set it with); nil, none.
    public var keepingSession: UUID?

    public init(
        _ kind: Kind, of userID: String, in appID: AppID, requestID: String, actor: UUID?, keepingSession: UUID? = nil,
        id: UUID = UUID()
    ) {
        self.id = id
        self.kind = kind
        self.keepingSession = keepingSession
        self.userID = userID
        self.appID = appID
        self.requestID = requestID
        self.actor = actor
    }

    /// The reason every row the change causes gives (`detail.reason`), and
    /// what a sign-in written after it gives for ending its own session
    /// (``CredentialVerifier/lapse(of:in:)``).
    public var reason: String { kind.rawValue }

    /// A row of `event` the change causes: a success, naming its request, its admin and its reason.
    public func row(_ event: String, credentialType: String?, detail: [String: String] = [:]) -> AuditEvent {
        var detail = detail
        detail["reason"] = reason
        return AuditEvent(
            appID: appID, event: event, outcome: .success, userID: userID, credentialType: credentialType,
            requestID: requestID, actor: actor, detail: detail)
    }
}

/// The request (and the admin, if one sent it) behind a directory write
/// whose user changes are known only once it runs (a PUT or an import
/// replacing users): what the write makes them with.
public struct UserChangeOrigin: Sendable {
    public let requestID: String
    public let actor: UUID?

    public init(requestID: String, actor: UUID?) {
        self.requestID = requestID
        self.actor = actor
    }

    /// A change of `kind` to `userID` made by this request.
    public func change(_ kind: UserChange.Kind, of userID: String, in appID: AppID) -> UserChange {
        UserChange(kind, of: userID, in: appID, requestID: requestID, actor: actor)
    }
}
