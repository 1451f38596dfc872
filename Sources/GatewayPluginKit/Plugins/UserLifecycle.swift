public import Foundation
public import GatewayCore

/// A change to one user of one app that everything holding something of
/// theirs must hear: their sessions and sign-in tickets, their second
/// factor, and what each plugin keeps under their id (passkeys, bound
/// numbers). Made by whichever route changed the user (the admin API's
/// PUT, PATCH, DELETE and import, the console through it, an admin ending
/// every session) and handed to one ``UserLifecycle``.
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

    public init(_ kind: Kind, of userID: String, in appID: AppID, requestID: String, actor: UUID?) {
        self.kind = kind
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

/// A plugin that keeps something under a user id (the passkey plugin's
/// passkeys, the phone plugin's bound numbers): it hears every
/// ``UserChange`` of an app it serves, whichever route made it.
public protocol HearsUserChanges: Sendable {
    /// Brings what this plugin keeps of `change.userID` in line with the
    /// change (a deleted user's credentials removed, say), each change with
    /// the row ``UserChange/row(_:credentialType:detail:)`` makes; how many
    /// things changed. Called again with the same change, it changes
    /// nothing more: a route that failed half way is sent again.
    func hear(_ change: UserChange, services: PluginServices) async throws -> Int
}

/// The one way a user's change reaches everything that holds something of
/// theirs: the sessions, then the second factor and tickets and every
/// plugin that ``HearsUserChanges``, in that order. Each hearer is
/// idempotent, so a route whose change failed half way answers 503 and
/// the same request sent again finishes it. The sessions end first: a
/// credential a session added before the sweep that follows is swept, and
/// one it adds after finds its session ended and takes itself back
/// (``SessionHolders/endedReason(of:in:)``).
public struct UserLifecycle: Sendable {
    /// One holder's part: brings what it keeps in line with the change; how many things changed.
    public typealias Hearer = @Sendable (UserChange) async throws -> Int

    private let credentials: [Hearer]
    private let sessions: Hearer

    /// - Parameters:
    ///   - secondFactor: the user's factor and their sign-ins' tickets.
    ///   - plugins: each of them that ``HearsUserChanges`` hears, in their order.
    ///   - sessions: ends the user's sessions where the change ends them; how many.
    public init(
        secondFactor: @escaping Hearer, plugins: [any CredentialPlugin], services: PluginServices,
        sessions: @escaping Hearer
    ) {
        let hearers = plugins.compactMap { $0 as? any HearsUserChanges }
        credentials =
            [secondFactor]
            + hearers.map { hearer in { @Sendable change in try await hearer.hear(change, services: services) } }
        self.sessions = sessions
    }

    /// What a change came to.
    public struct Outcome: Sendable, Equatable {
        /// Credentials, factors and tickets changed or removed.
        public var credentials = 0
        /// Sessions ended.
        public var sessions = 0
    }

    /// Tells every holder of `change.userID`'s things; stops at the first
    /// failure, what was done staying done. With `endingSessions` false the
    /// sessions are left for a later call: a deletion takes the user's
    /// credentials while their row is still there to be found, then, once
    /// it is gone, ends the sessions and sweeps once more (each ending of
    /// sessions writes its row, so it is done once).
    @discardableResult
    public func apply(_ change: UserChange, endingSessions: Bool = true) async throws -> Outcome {
        var outcome = Outcome()
        if endingSessions { outcome.sessions = try await sessions(change) }
        for hearer in credentials { outcome.credentials += try await hearer(change) }
        return outcome
    }
}
