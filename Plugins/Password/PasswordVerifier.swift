import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Logging

/// Checks `credentials: {"type": "password", "password": "..."}` against the
/// app's user directory. Unknown user, disabled user and wrong password are
/// one answer with one cost: an unknown user is compared against a dummy hash
/// made with the app's parameters, and a disabled user's password is checked
/// before the flag is.
struct PasswordVerifier: CredentialVerifier {
    let authenticationMethods = ["pwd"]
    /// `last_login_at` is written at most this often per user (seconds), so a
    /// user signing in again and again costs no write each time.
    static let lastLoginResolution: TimeInterval = 60

    let options: PasswordOptions
    let users: any PasswordUserStore
    let hasher: PasswordHasher
    let lastLogins: LastLoginWriter
    /// How the user's row is read: within its timeout, again while the database fails over.
    let databaseRetry: DatabaseRetry
    let logger: Logger
    /// The app's `self_service.sign_up` is `verified_email`: an account
    /// whose address is known to be unverified (a self-service one not yet
    /// confirmed) is refused once its password is right.
    var requiresVerifiedEmail = false
    /// Asks the app's human check (`human_check`) on the token route.
    let guarding: SendGuard

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        guard let userID = attempt.userID else {
            throw GatewayError.invalidRequest("user_id is required for credentials of type password.")
        }
        guard let password = attempt.credentials.fields["password"], !password.isEmpty else {
            throw GatewayError.invalidRequest("credentials.password is required for credentials of type password.")
        }
        if let verdict = try await check(userID, password, in: attempt.app.appID) { return verdict }
        try await hasher.verifyAgainstNobody(password, parameters: options.argon2, for: .login(attempt.app.appID))
        return .rejected(reason: "unknown_user")
    }

    /// The verdict for a user the app has (and the login noted, the hash
    /// upgraded to the app's cost); nil when it has no such user.
    /// Deleted, disabled, or (where the app's sessions end with a new
    /// password) a hash other than the one the sign-in checked.
    func lapse(of identity: VerifiedIdentity, in app: AppSettings) async throws -> String? {
        let users = self.users
        let user = try await databaseRetry.run { try await users.find(identity.userID, in: app.appID) }
        guard let user else { return UserChange.Kind.deleted.rawValue }
        if user.disabled { return UserChange.Kind.disabled.rawValue }
        if let checked = identity.checkedAgainst, checked != user.hash.digest, app.sessions?.revokeOnPasswordChange ?? false {
            return UserChange.Kind.passwordChanged.rawValue
        }
        return nil
    }

    func check(_ userID: String, _ password: String, in appID: AppID) async throws -> VerificationResult? {
        let users = self.users
        let user = try await databaseRetry.run { try await users.find(userID, in: appID) }
        guard let user else { return nil }
        guard try await hasher.verify(password, against: user.hash, for: .login(appID)) else { return .rejected(reason: "bad_password") }
        guard !user.disabled else { return .rejected(reason: "disabled") }
        if requiresVerifiedEmail, user.profile.emailVerified == false {
            throw GatewayError(
                .emailUnverified, .forbidden, "Verify this account's email address first (the code sent at sign-up, or ask for another).")
        }

        var upgraded: PasswordHash?
        if user.hash.needsRehash(for: options.argon2) {
            do {
                upgraded = try await hasher.hash(password, parameters: options.argon2, for: .login(appID))
            } catch {
                // Busy: the login stands, the upgrade waits for the next one.
                logger.notice("password rehash skipped", metadata: ["app_id": "\(appID)", "error": "\(error)"])
            }
        }
        var identity = user.identity
        identity.checkedAgainst = user.hash.digest
        if let upgraded {
            do {
                try await users.recordLogin(userID, in: appID, replacing: user.hash, with: upgraded)
                identity.checkedAgainst = upgraded.digest
            } catch {
                logger.warning("recording a login failed", metadata: ["app_id": "\(appID)", "error": "\(error)"])
            }
        } else if !(user.lastLoginAt.map { Date().timeIntervalSince($0) < Self.lastLoginResolution } ?? false) {
            lastLogins.note(userID)
        }
        return .verified(identity)
    }
}

extension PasswordVerifier: HumanCheckedVerifier {
    /// The app's `human_check` on the sign-in's `credentials.captcha_token`, before the password is hashed.
    func checkHuman(_ credentials: Credentials, _ passage: inout PublicRequest) async throws(GatewayError) {
        guard let check = options.humanCheck else { return }
        try await guarding.checkHuman(
            SendProtection(humanCheck: check), token: credentials.fields[SendGuard.tokenField], prefix: nil, &passage)
    }
}
