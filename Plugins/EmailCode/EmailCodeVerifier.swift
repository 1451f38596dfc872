import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit

/// Checks `credentials: {"type": "email_code", "email": "...", "code": "..."}`.
/// The user is the password directory's one user with that email, or the
/// address itself where the app allows unknown addresses; a `user_id` in
/// the request must match it. A disabled user is refused (`user_disabled`)
/// once the code is right.
struct EmailCodeVerifier: CredentialVerifier {
    /// A one-time code (RFC 8176 `otp`), sent by email.
    let authenticationMethods = ["otp"]
    let options: EmailCodeOptions
    let codes: OneTimeCodes
    let store: any CodeStore<EmailAddress>
    let databaseRetry: DatabaseRetry
    /// The password plugin's users of the app, where the addresses belong.
    let directory: (any PasswordDirectory)?

    /// Failures count per address too, so guessing one address's code from many user ids is held.
    func rateLimitSubjects(for credentials: Credentials) -> [String: String] {
        guard let address = credentials.fields["email"].flatMap(EmailAddress.init) else { return [:] }
        return [RateLimitPolicy.emailFailures.name: address.text]
    }

    /// Who `address` signs in as: its user, nil for nobody.
    func owner(of address: EmailAddress, in appID: AppID) async throws -> VerificationResult? {
        if let directory, let found = try await directory.identity(ofEmail: address.text, in: appID) { return found }
        return options.allowUnknownAddresses ? .verified(VerifiedIdentity(userID: address.text)) : nil
    }

    /// A session started with an email code ends when its user is disabled
    /// or deleted from the password directory; an address that signed in
    /// as itself (unknown addresses allowed) has nobody to lose.
    func lapse(of identity: VerifiedIdentity, in app: AppSettings) async throws -> String? {
        guard let directory else { return nil }
        switch try await directory.identity(of: identity.userID, in: app.appID) {
        case .verified?, .undecided?: return nil
        case .rejected?: return UserChange.Kind.disabled.rawValue
        case nil:
            if options.allowUnknownAddresses, EmailAddress(identity.userID)?.text == identity.userID { return nil }
            return UserChange.Kind.deleted.rawValue
        }
    }

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        let address = try EmailAddress.parse(attempt.credentials.fields["email"], field: "credentials.email")
        guard let code = attempt.credentials.fields["code"], OneTimeCodes.isWellFormed(code) else {
            throw GatewayError.invalidRequest("credentials.code must be the digits of the code.")
        }
        let appID = attempt.app.appID
        let owner = try await owner(of: address, in: appID)
        if case .verified(let identity)? = owner, let userID = attempt.userID, userID != identity.userID {
            return .rejected(reason: "user_mismatch")
        }
        // An address that signs in nobody has an unsent code too (EmailCodeController): it is checked, and
        // spends its tries, like any other, so the attempt costs the same work.
        let mac = codes.mac(code, for: address, in: appID)
        let check = try await withDatabaseTimeout(databaseRetry.attemptTimeout) { try await store.check(mac, for: address, in: appID) }
        guard let owner else { return .rejected(reason: "unknown_address") }
        if let reason = check.refusalReason { return .rejected(reason: reason) }
        if case .rejected = owner { return .rejected(reason: UserChange.Kind.disabled.rawValue) }
        return owner
    }
}
