public import GatewayCore
import GatewayCourier
public import GatewayPluginKit

/// One app's password users as another plugin may use them
/// (``PasswordDirectory``, in the seam): a user the directory has is
/// checked here, and a user another service has vouched for can be added
/// (the webhook plugin's `migrate_on_success`).
struct PasswordUserDirectory: PasswordDirectory {
    let verifier: PasswordVerifier

    /// The password plugin's verdict for a user the app has, as a password
    /// login would give it, whatever the password; nil only when the app has
    /// no such user (ask elsewhere). A token request's fields are bounded
    /// before any plugin sees them (``Credentials/maximumFieldBytes``).
    public func verify(_ userID: String, password: String, in appID: AppID) async throws -> VerificationResult? {
        try await verifier.check(userID, password, in: appID)
    }

    /// The identity of the app's user `userID` as a login would give it, or
    /// `.rejected("disabled")` for a disabled one; nil when the app has no
    /// such user. For a plugin that signs a user in without their password
    /// (the ID-token plugin's email linking).
    public func identity(of userID: String, in appID: AppID) async throws -> VerificationResult? {
        let users = verifier.users
        guard let user = try await verifier.databaseRetry.run({ try await users.find(userID, in: appID) })
        else { return nil }
        return user.disabled ? .rejected(reason: "disabled") : .verified(user.identity)
    }

    /// The one user whose email is `email`, whatever its case; nil when none or several have it.
    public func identity(ofEmail email: String, in appID: AppID) async throws -> VerificationResult? {
        let users = verifier.users
        let found = try await verifier.databaseRetry.run { try await users.find(email: email, in: appID) }
        guard found.count == 1, let user = found.first else { return nil }
        return user.disabled ? .rejected(reason: "disabled") : .verified(user.identity)
    }

    /// Adds `identity` with `password`, hashed at the app's argon2id cost,
    /// unless the app has a user with that id already (an admin's user is
    /// never replaced), with its audit row `user.migrated` (`detail.from`:
    /// `source`) in the same transaction. Returns whether it was added.
    ///
    /// - Throws: ``GatewayError/busy`` when the hashing queue is full; a
    ///   password longer than any login accepts is not added.
    public func adopt(
        _ identity: VerifiedIdentity, password: String, in appID: AppID, requestID: String, from source: String
    ) async throws -> Bool {
        guard !password.isEmpty, password.utf8.count <= PasswordPolicy.maximumBytes else { return false }
        let record = PasswordUserRecord(
            userID: identity.userID,
            hash: try await verifier.hasher.hash(password, parameters: verifier.options.argon2, for: .admin(appID)),
            profile: identity.profile, disabled: false)
        let event = AuditEvent(
            appID: appID, event: "user.migrated", outcome: .success, userID: identity.userID, credentialType: "password",
            requestID: requestID, detail: ["from": source])
        return try await verifier.users.insertIfAbsent(record, in: appID, recording: event)
    }
}

extension PasswordUserDirectory {
    public func newPassword(_ password: String, field: String, in appID: AppID) async throws -> NewPassword {
        try verifier.options.policy.check(password, field: field)
        return NewPassword(hash: try await verifier.hasher.hash(password, parameters: verifier.options.argon2, for: .login(appID)).text)
    }

    public func checkNewPassword(_ password: String, field: String, in appID: AppID) throws(GatewayError) {
        try verifier.options.policy.check(password, field: field)
    }

    public func account(of userID: String, in appID: AppID) async throws -> Account? {
        let users = verifier.users
        return try await verifier.databaseRetry.run { try await users.find(userID, in: appID) }?.account
    }

    public func account(ofEmail email: String, in appID: AppID) async throws -> Account? {
        let users = verifier.users
        let found = try await verifier.databaseRetry.run { try await users.find(email: email, in: appID) }
        guard found.count == 1 else { return nil }
        return found.first?.account
    }

    public func signUp(
        _ userID: String, email: String, password: NewPassword, profile: UserProfile, in appID: AppID,
        recording describe: @escaping @Sendable (AccountSignUp) -> AuditEvent
    ) async throws -> AccountSignUp {
        var profile = profile
        profile[.email] = email
        profile.emailVerified = false
        let record = PasswordUserRecord(userID: userID, hash: try Self.hash(password), profile: profile, disabled: false)
        return try await verifier.users.signUp(record, email: email, in: appID, recording: describe)
    }

    public func setPassword(
        _ password: NewPassword, of userID: String, verifyingEmail: Bool, in appID: AppID, recording event: AuditEvent,
        journaling change: UserChange
    ) async throws -> Bool {
        let hash = try Self.hash(password)
        return try await verifier.users.update(userID, in: appID, recording: event, journaling: [change]) { user in
            var kept = user.profile
            if verifyingEmail, kept[.email] != nil { kept.emailVerified = true }
            return PasswordUserRecord(userID: userID, hash: hash, profile: kept, disabled: user.disabled)
        }
    }

    public func verifyEmail(_ email: String, of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try await verifier.users.verifyEmail(email, of: userID, in: appID, recording: event)
    }

    public func changeEmail(
        of userID: String, to email: String, in appID: AppID, recording event: AuditEvent, journaling change: UserChange
    ) async throws -> AccountEmailChange {
        try await verifier.users.changeEmail(of: userID, to: email, in: appID, recording: event, journaling: [change])
    }

    public func deleteAccount(_ userID: String, in appID: AppID, recording event: AuditEvent, journaling change: UserChange)
        async throws -> Bool
    {
        try await verifier.users.delete(userID, in: appID, recording: event, journaling: [change])
    }

    private static func hash(_ password: NewPassword) throws -> PasswordHash {
        guard let hash = PasswordHash(password.hash) else { throw GatewayError.internalError }
        return hash
    }
}

extension PasswordPlugin: PasswordDirectoryProvider {
    /// The password directory of `app`, at the cost its password options
    /// (`plugins.password`) set; a 400 naming them when they are wrong.
    public func directory(for app: AppSettings, services: PluginServices) throws(GatewayError) -> any PasswordDirectory {
        try userDirectory(for: app, services: services)
    }

    func userDirectory(for app: AppSettings, services: PluginServices) throws(GatewayError) -> PasswordUserDirectory {
        let users = services.passwordUsers
        let verifier = PasswordVerifier(
            options: try PasswordOptions(app.plugins[credentialType] ?? .null, hashLimits: hasher.limits),
            users: users, hasher: hasher,
            lastLogins: LastLoginWriter(
                appID: app.appID, users: users, pending: pendingLastLogins, delay: lastLoginDelay,
                databaseTimeout: services.databaseTimeout, logger: services.logger),
            databaseRetry: services.databaseRetry, logger: services.logger,
            requiresVerifiedEmail: app.selfService?.signUp == .verifiedEmail,
            guarding: SendGuard(channel: PasswordPlugin.type, services: services))
        return PasswordUserDirectory(verifier: verifier)
    }
}
