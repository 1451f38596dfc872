public import GatewayCore
import Logging

/// What a plugin that keeps an app's users and their passwords offers the
/// plugins registered after it (``PluginSetup/plugin(offering:)``): the
/// webhook plugin moves users it verified into it, the ID-token plugin links
/// a verified email to one of its users. The password plugin provides it.
public protocol PasswordDirectoryProvider: Sendable {
    /// The directory of `app`, at the cost its options set; a 400 naming
    /// them when they are wrong.
    func directory(for app: AppSettings, services: PluginServices) throws(GatewayError) -> any PasswordDirectory
}

/// One app's password users as another plugin may use them.
public protocol PasswordDirectory: Sendable {
    /// The verdict a password login would give `userID` with `password`;
    /// nil only when the app has no such user (ask elsewhere).
    func verify(_ userID: String, password: String, in appID: AppID) async throws -> VerificationResult?

    /// The identity of the app's user `userID` as a login would give it,
    /// or `.rejected("disabled")` for a disabled one; nil when the app has
    /// no such user. For a plugin that signs a user in without their password.
    func identity(of userID: String, in appID: AppID) async throws -> VerificationResult?

    /// The identity of the app's one user whose email is `email` (compared
    /// case-insensitively), as ``identity(of:in:)`` gives it; nil when no
    /// user, or more than one, has it: an address shared by two users signs
    /// in neither. For a plugin that signs a user in by their address (email codes).
    func identity(ofEmail email: String, in appID: AppID) async throws -> VerificationResult?

    /// Adds `identity` with `password` unless the app has a user with that
    /// id already (an existing user is never replaced), audited as
    /// `user.migrated` with `detail.from` = `source`. Returns whether it was added.
    func adopt(
        _ identity: VerifiedIdentity, password: String, in appID: AppID, requestID: String, from source: String
    ) async throws -> Bool
}

extension PasswordDirectoryProvider {
    /// The directory of `app` for a plugin that checks its sign-ins against
    /// it (`signIns` names them in the log: "passkey sign-ins"), or nil when
    /// it cannot be opened. Password options the operator's argon2 ceiling no
    /// longer allows fail the app's password logins (a 400 naming them); the
    /// other plugin's sign-ins then go on without the directory's word rather
    /// than not at all, and the operator is told which app, once each time
    /// the app is loaded.
    public func openDirectory(for app: AppSettings, services: PluginServices, checking signIns: String) -> (any PasswordDirectory)? {
        do {
            return try directory(for: app, services: services)
        } catch {
            services.logger.warning(
                "\(signIns) of this app are not checked against its password users",
                metadata: ["app_id": "\(app.appID)", "error": "\(error.message)"])
            return nil
        }
    }
}
