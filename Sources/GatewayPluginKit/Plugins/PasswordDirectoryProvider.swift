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

    // What self-service (the email plugin's account routes) asks of the directory.

    /// `password` checked against the app's rules (a 400 naming `field`,
    /// never the password) and hashed at the app's cost; 503 `busy` when the
    /// hashing queue is full. Hashed whoever it is for, so that a request
    /// for an address nobody has costs what one for a user's does.
    func newPassword(_ password: String, field: String, in appID: AppID) async throws -> NewPassword

    /// The app's rules checked against `password`, with no hashing: a 400
    /// naming `field`. For a route that must refuse a bad password before
    /// it spends what proves the user.
    func checkNewPassword(_ password: String, field: String, in appID: AppID) throws(GatewayError)

    /// The account `userID`, nil when the app has no such user.
    func account(of userID: String, in appID: AppID) async throws -> Account?

    /// The one account whose address is `email` (any case); nil when none, or several, have it.
    func account(ofEmail email: String, in appID: AppID) async throws -> Account?

    /// Adds a self-service account (`email` its address, not yet verified)
    /// unless a user has that address or id already: then nothing is
    /// changed, and that account is answered. Either way the row `describe`
    /// makes of the outcome commits in the same transaction, so a sign-up
    /// for a registered address commits what a new one does (a commit
    /// skipped made it measurably quicker on a loaded host). One address
    /// gets one account however many sign-ups ask at once, on every replica.
    func signUp(
        _ userID: String, email: String, password: NewPassword, profile: UserProfile, in appID: AppID,
        recording describe: @escaping @Sendable (AccountSignUp) -> AuditEvent
    ) async throws -> AccountSignUp

    /// Gives the user `password` (their address verified, with
    /// `verifyingEmail`), with `event` and `change` journaled; false when
    /// there is no such user. The caller then applies `change` (``UserLifecycle/apply(_:)``).
    func setPassword(
        _ password: NewPassword, of userID: String, verifyingEmail: Bool, in appID: AppID, recording event: AuditEvent,
        journaling change: UserChange
    ) async throws -> Bool

    /// Marks `email` verified, with `event`, while it is still the user's address; whether it was.
    func verifyEmail(_ email: String, of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool

    /// Makes `email`, verified, the user's address, with `event` and
    /// `change` journaled, unless another user has it. The caller then applies `change`.
    func changeEmail(
        of userID: String, to email: String, in appID: AppID, recording event: AuditEvent, journaling change: UserChange
    ) async throws -> AccountEmailChange

    /// Deletes the user from the directory, with `event` and `change`
    /// journaled; false when there was none. The caller then applies
    /// `change`, as the admin API's deletion does.
    func deleteAccount(_ userID: String, in appID: AppID, recording event: AuditEvent, journaling change: UserChange)
        async throws -> Bool
}

/// A password hashed for an account, as ``PasswordDirectory/newPassword(_:field:in:)`` made it.
public struct NewPassword: Sendable {
    /// The PHC string.
    public let hash: String

    public init(hash: String) {
        self.hash = hash
    }
}

/// A password user as self-service sees them.
public struct Account: Sendable, Equatable {
    public let userID: String
    public let email: String?
    /// True where a code sent to `email` came back; nil where nobody knows.
    public let emailVerified: Bool?
    public let disabled: Bool

    public init(userID: String, email: String?, emailVerified: Bool?, disabled: Bool) {
        self.userID = userID
        self.email = email
        self.emailVerified = emailVerified
        self.disabled = disabled
    }

    /// A self-service account, enabled, whose address was never verified
    /// (an admin's user, whose address nobody proved, is not waiting for it).
    public var awaitsVerification: Bool { emailVerified == false && !disabled }
}

/// What a sign-up found.
public enum AccountSignUp: Sendable, Equatable {
    case created
    /// The address (or the id) is this account's already.
    case exists(Account)
}

/// What changing a user's address did.
public enum AccountEmailChange: Sendable, Equatable {
    case changed
    /// Another user has the address.
    case taken
    /// The user is gone.
    case noUser
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

extension GatewayError.Code {
    /// 409: another user of the app has the address (an address belongs to one user).
    public static let emailTaken = GatewayError.Code(rawValue: "email_taken")
}
