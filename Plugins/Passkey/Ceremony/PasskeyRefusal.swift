/// Why a passkey registration or assertion was not taken: the audit row's
/// reason (`passkey_<check>`), naming the check that failed and nothing of
/// the credential.
public enum PasskeyRefusal: String, Error, Sendable, Equatable {
    /// A field is not base64url, or the client data, attestation object or
    /// authenticator data cannot be read.
    case malformed
    /// The client data's `type` is not the ceremony's (`webauthn.create` or `webauthn.get`).
    case type
    /// The challenge is not one the gateway gave for this ceremony, app and
    /// user, or it was spent or has expired.
    case challenge
    /// The origin is none of the app's, or the ceremony ran in a cross-origin frame.
    case origin
    /// The authenticator data is for another relying party (`rpIdHash`).
    case relyingParty = "rp_id"
    /// The user-present flag is not set.
    case userPresence = "user_presence"
    /// The app requires user verification and the UV flag is not set.
    case userVerification = "user_verification"
    /// The key's algorithm is not one the app accepts.
    case algorithm
    /// The attestation object is not `none` with an empty statement nor a known format.
    case attestation
    /// Registration without attested credential data, or an assertion with it.
    case credentialData = "credential_data"
    /// No passkey of the app has this credential id.
    case unknownCredential = "unknown_credential"
    /// The response's `userHandle` is not the user of the credential.
    case userHandle = "user_handle"
    case signature
    /// The signature counter did not grow (and is not 0 on both sides): a cloned authenticator, perhaps.
    case counter
    /// The credential id is registered already (to this user or another).
    case duplicate

    public var auditReason: String { "passkey_\(rawValue)" }
}
