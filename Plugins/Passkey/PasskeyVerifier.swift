import CoreMetrics
import Crypto
import Foundation
import GatewayCore
import GatewayPluginKit
import Logging

/// Checks `credentials: {"type": "passkey", "credential_id", "client_data_json",
/// "authenticator_data", "signature", "user_handle"}` (each base64url, as
/// the platform returns them), in this order:
/// 1. the client data is read and its challenge spent: one the gateway gave
///    this app for an assertion (`POST /v1/passkeys/authentication_options`),
///    live, and not spent before on any replica;
/// 2. the passkey with that credential id, and its user: the `user_handle`
///    must be that user's (``PasskeyUserHandle``), and a `user_id` sent
///    with the request must be that user;
/// 3. the checks of ``PasskeyCeremonies/assert(clientData:clientDataJSON:authenticatorData:signature:credential:relyingParty:)``:
///    type, origin, RP ID hash, flags, signature, counter;
/// 4. where the password plugin keeps the app's users, the user is not
///    disabled there (`passkey_user_disabled`), and the sign-in carries the
///    profile kept there; a user it does not know signs in as before (a
///    passkey's user may come from a webhook or an ID token);
/// 5. the counter and flags are stored only over the counter read in 2, so
///    two assertions of one passkey at once pass once.
///
/// Each failed check is a 401 whose audit reason names it
/// (``PasskeyRefusal/auditReason``). Nothing counts against a user before
/// the signature holds (``provesItsUser``); a counter that went back is
/// the owner's failure, and its row says `passkey_counter`.
struct PasskeyVerifier: CredentialVerifier {
    var provesItsUser: Bool { true }
    /// A sign-in's own methods are its passkey's (``methods(of:)``); these
    /// are what any passkey shows.
    var authenticationMethods: [String] { ["user"] }

    let options: PasskeyOptions
    let store: any PasskeyStore
    /// The password plugin's users of the app, when it is installed.
    var directory: (any PasswordDirectory)? = nil

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        let outcome = try await check(attempt)
        switch outcome {
        case .verified: Self.count(attempt.app.appID, "verified")
        case .rejected(let reason, _), .undecided(let reason): Self.count(attempt.app.appID, reason)
        }
        return outcome
    }

    /// Where the password plugin keeps the app's users: a user it disabled
    /// since, or deleted (gone from it, and their passkeys with them), ends
    /// the session the sign-in started. A user it never kept (who signs in
    /// elsewhere) keeps their passkeys and their session.
    func lapse(of identity: VerifiedIdentity, in app: AppSettings) async throws -> String? {
        guard let directory else { return nil }
        switch try await directory.identity(of: identity.userID, in: app.appID) {
        case .rejected?: return UserChange.Kind.disabled.rawValue
        case .verified?, .undecided?: return nil
        case nil: return try await store.passkeys(of: identity.userID, in: app.appID).isEmpty ? UserChange.Kind.deleted.rawValue : nil
        }
    }

    private func check(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        let credentials = attempt.credentials
        let appID = attempt.app.appID
        guard let credentialID = PasskeyField.bytes(try credentials.requiredField("credential_id")),
            let clientDataJSON = PasskeyField.bytes(try credentials.requiredField("client_data_json")),
            let authenticatorData = PasskeyField.bytes(try credentials.requiredField("authenticator_data")),
            let signature = PasskeyField.bytes(try credentials.requiredField("signature")),
            let userHandle = PasskeyField.bytes(try credentials.requiredField("user_handle"))
        else { return .rejected(reason: PasskeyRefusal.malformed.auditReason) }
        let clientData: ClientData
        do { clientData = try ClientData(bytes: clientDataJSON) } catch { return .rejected(reason: error.auditReason) }
        guard try await store.spendChallenge(PasskeyChallenge.digest(clientData.challenge), for: .assertion, in: appID).spent
        else { return .rejected(reason: PasskeyRefusal.challenge.auditReason) }

        guard let passkey = try await store.passkey(credentialID, in: appID) else {
            return .rejected(reason: PasskeyRefusal.unknownCredential.auditReason)
        }
        guard ConstantTime.equals(userHandle, PasskeyUserHandle.of(passkey.userID, in: appID)) else {
            return .rejected(reason: PasskeyRefusal.userHandle.auditReason)
        }
        if let named = attempt.userID, named != passkey.userID { return .rejected(reason: "passkey_user_id") }
        let asserted: AssertedCredential
        do {
            asserted = try PasskeyCeremonies.assert(
                clientData: clientData, clientDataJSON: clientDataJSON, authenticatorData: authenticatorData,
                signature: signature, credential: passkey.record, relyingParty: options.relyingParty)
        } catch .counter {
            return .rejected(reason: PasskeyRefusal.counter.auditReason, userID: passkey.userID)
        } catch {
            return .rejected(reason: error.auditReason)
        }
        var identity = VerifiedIdentity(userID: passkey.userID)
        switch try await directory?.identity(of: passkey.userID, in: appID) {
        case .verified(let kept)?: identity.profile = kept.profile
        case .rejected?: return .rejected(reason: "passkey_user_disabled", userID: passkey.userID)
        case .undecided?, nil: break
        }
        guard try await store.recordUse(of: credentialID, in: appID, previous: passkey.signCount, asserted: asserted) else {
            return .rejected(reason: PasskeyRefusal.counter.auditReason, userID: passkey.userID)
        }
        identity.methods = Self.methods(of: asserted, boundAtOneFactor: passkey.isBoundAtOneFactor)
        return .verified(identity)
    }

    /// RFC 8176 values for a sign-in with the passkey: `swk` for a synced
    /// one (backup eligible), `hwk` for one bound to its device; `user`,
    /// as the user was present; `mfa` when the user was verified too (a
    /// PIN or biometric unlocked the key: two factors, AAL2), unless a
    /// one-factor session added the passkey: it is bound at that level.
    static func methods(of asserted: AssertedCredential, boundAtOneFactor: Bool) -> [String] {
        [asserted.backupEligible ? "swk" : "hwk", "user"]
            + (asserted.userVerified && !boundAtOneFactor ? [AuthenticationMethods.multipleFactors] : [])
    }

    /// `gateway_passkey_checks_total`: each assertion checked, by app and outcome (`verified` or the audit reason).
    static func count(_ appID: AppID, _ outcome: String) {
        Counter(label: "gateway_passkey_checks_total", dimensions: [("app_id", appID.description), ("outcome", outcome)])
            .increment()
    }
}

/// A passkey field as the client sends it: unpadded base64url, as
/// WebAuthn Level 3's JSON forms (`toJSON()`) write every byte string.
enum PasskeyField {
    static func bytes(_ text: String) -> [UInt8]? {
        Base64URL.decode(text).map { Array($0) }
    }
}

/// The WebAuthn user handle of a user of an app: 32 bytes derived from the
/// app and the user id, so it is stable for every passkey of the user and
/// carries no personal data (a user id may be an email address).
enum PasskeyUserHandle {
    static func of(_ userID: String, in appID: AppID) -> [UInt8] {
        Array(SHA256.hash(data: Array("passkey-user-handle\u{0}\(appID.uuid.lowercasedText)\u{0}\(userID)".utf8)))
    }
}

/// The challenges the gateway gives: 32 random bytes, stored as their SHA-256.
enum PasskeyChallenge {
    static func generate() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func digest(_ challenge: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: challenge)) }
}
