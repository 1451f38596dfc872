public import Foundation
public import GatewayCore

/// A plugin that keeps credentials of its own under a user id (the passkey
/// plugin's passkeys, the phone plugin's bound numbers). When an app's user
/// directory deletes the user, they go too (``UserCredentialRemoval``).
public protocol HoldsUserCredentials: Sendable {
    /// Removes every credential `userID` holds in `appID`, each with a row
    /// naming the deleting request (`requestID`), the admin who sent it
    /// (`actor`) and, in its `detail.reason`, ``UserCredentialRemoval/reason``; how
    /// many went.
    func removeCredentials(
        of userID: String, in appID: AppID, requestID: String, actor: UUID?, services: PluginServices
    ) async throws -> Int
}

/// Everything the gateway keeps for a user id besides a directory's own
/// row: their second factor with its recovery codes, and what each plugin
/// that ``HoldsUserCredentials`` keeps (passkeys, bound phone numbers). A
/// directory deleting a user calls ``remove(of:in:requestID:actor:)`` first, so a user created
/// again under the same id inherits none of it, and a passkey of the
/// deleted user signs nobody in. Sessions end apart (`SessionStore`), after
/// the row is gone.
public struct UserCredentialRemoval: Sendable {
    /// One kind of credential: removes the user's, each with its row; how many went.
    public typealias Step = @Sendable (
        _ userID: String, _ appID: AppID, _ requestID: String, _ actor: UUID?
    ) async throws -> Int

    private let steps: [Step]

    private init(_ steps: [Step]) {
        self.steps = steps
    }

    /// The second factor's removal, then each of `plugins` that
    /// ``HoldsUserCredentials``, in their order.
    public init(secondFactor: @escaping Step, plugins: [any CredentialPlugin], services: PluginServices) {
        let holders = plugins.compactMap { $0 as? any HoldsUserCredentials }
        self.init(
            [secondFactor]
                + holders.map { holder in
                    { @Sendable userID, appID, requestID, actor in
                        try await holder.removeCredentials(
                            of: userID, in: appID, requestID: requestID, actor: actor, services: services)
                    }
                })
    }

    /// The reason each removal's row gives (`detail.reason`), as the
    /// user's `session.revoked` row does.
    public static let reason = "user_deleted"

    /// Removes the user's credentials of every kind; how many went. A
    /// failure stops it where it is: what went stays gone, and the directory
    /// must not delete its row, so the same request sent again finishes it.
    @discardableResult
    public func remove(of userID: String, in appID: AppID, requestID: String, actor: UUID?) async throws -> Int {
        var removed = 0
        for step in steps { removed += try await step(userID, appID, requestID, actor) }
        return removed
    }
}

/// Why an admin's change to a directory user ended their sessions: the
/// `session.revoked` row's reason, and what a sign-in written after the
/// change gives for ending its own (``CredentialVerifier/lapse(of:in:)``).
public enum UserChangeReason {
    public static let deleted = UserCredentialRemoval.reason
    public static let disabled = "user_disabled"
    public static let passwordChanged = "password_changed"
}
