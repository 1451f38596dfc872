import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Logging

/// Checks `credentials: {"type": "phone_code", "phone_number": "+...", "code": "..."}`.
/// The user is the one bound to the number in the app's directory, or the
/// number itself when the app allows unbound numbers; a `user_id` in the
/// request must match it. Where the password plugin keeps the app's users,
/// a bound user it has disabled is refused (`user_disabled`) once the code
/// is right.
struct PhoneCodeVerifier: CredentialVerifier {
    /// A code sent by SMS (RFC 8176).
    let authenticationMethods = ["sms"]
    let options: PhoneCodeOptions
    let codes: OneTimeCodes
    let store: any PhoneCodeStore
    /// How the number's binding is read: within its timeout, again while the
    /// database fails over. A code's check spends a try, so it is made once.
    let databaseRetry: DatabaseRetry
    /// The password plugin's users of the app, when it is installed.
    var directory: (any PasswordDirectory)? = nil

    /// Failures count per number too, so guessing one number's code from many user ids is held.
    func rateLimitSubjects(for credentials: Credentials) -> [String: String] {
        credentials.fields["phone_number"].map { [RateLimitPolicy.phoneFailures.name: $0] } ?? [:]
    }

    /// A session started with a bound number ends when its user has no
    /// number left once it is written: deleting them from the password
    /// directory unbinds every one of theirs, and so may an admin. A number
    /// that signed in as itself (unbound numbers allowed) has none to lose.
    func lapse(of identity: VerifiedIdentity, in app: AppSettings) async throws -> String? {
        if case .rejected? = try await directory?.identity(of: identity.userID, in: app.appID) {
            return UserChange.Kind.disabled.rawValue
        }
        let store = self.store
        let bindings = try await databaseRetry.run { try await store.bindings(of: identity.userID, in: app.appID) }
        guard bindings.isEmpty else { return nil }
        if options.allowUnboundNumbers, (try? PhoneNumber.parse(identity.userID, field: "user_id"))?.text == identity.userID {
            return nil
        }
        return Self.unbound
    }

    /// Why a phone code's session ended: its user has no number left.
    static let unbound = "phone_number_unbound"

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        let number = try PhoneNumber.parse(attempt.credentials.fields["phone_number"], field: "credentials.phone_number")
        guard let code = attempt.credentials.fields["code"], OneTimeCodes.isWellFormed(code) else { throw GatewayError.invalidRequest("credentials.code must be the digits of the code.") }
        let appID = attempt.app.appID

        let store = self.store
        let identity: VerifiedIdentity?
        if let binding = try await databaseRetry.run({ try await store.binding(of: number, in: appID) }) {
            identity = binding.identity
        } else {
            identity = options.allowUnboundNumbers ? VerifiedIdentity(userID: number.text) : nil
        }
        if let identity, let userID = attempt.userID, userID != identity.userID { return .rejected(reason: "user_mismatch") }

        if let testCode = options.testCode(for: number), let identity {
            return ConstantTime.equals(code, testCode) ? try await admitted(identity, in: appID) : .rejected(reason: "bad_code")
        }
        // A number that cannot sign in has an unsent code too (see PhoneCodeController): it is checked, and
        // spends its tries, like any other, so the attempt costs the same work.
        let mac = codes.mac(code, for: number, in: appID)
        let check = try await withDatabaseTimeout(databaseRetry.attemptTimeout) { try await store.check(mac, for: number, in: appID) }
        guard let identity else { return .rejected(reason: "unknown_number") }
        if let reason = check.refusalReason { return .rejected(reason: reason) }
        return try await admitted(identity, in: appID)
    }

    /// A right code's user, unless the password directory, where it keeps
    /// the app's users, has disabled them; a user it never kept (a number
    /// signed in as itself, a webhook's user) signs in as the binding says.
    private func admitted(_ identity: VerifiedIdentity, in appID: AppID) async throws -> VerificationResult {
        guard let directory else { return .verified(identity) }
        let kept = try await databaseRetry.run { try await directory.identity(of: identity.userID, in: appID) }
        if case .rejected? = kept { return .rejected(reason: UserChange.Kind.disabled.rawValue) }
        return .verified(identity)
    }
}
