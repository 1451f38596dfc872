import Crypto

/// A new credential as a registration proved it, to be stored for its user.
public struct RegisteredCredential: Sendable {
    public let credentialID: [UInt8]
    /// The COSE key as the authenticator wrote it.
    public let publicKey: [UInt8]
    public let algorithm: COSEKey.Algorithm
    public let signCount: UInt32
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backedUp: Bool
    public let aaguid: [UInt8]
    public let attestationFormat: String
}

/// A passkey as stored: what an assertion is checked against.
public struct CredentialRecord: Sendable, Equatable {
    public let publicKey: [UInt8]
    public let signCount: UInt32

    public init(publicKey: [UInt8], signCount: UInt32) {
        self.publicKey = publicKey
        self.signCount = signCount
    }
}

/// What an assertion proved: the counter and flags to store.
public struct AssertedCredential: Sendable, Equatable {
    public let signCount: UInt32
    public let userVerified: Bool
    public let backupEligible: Bool
    public let backedUp: Bool
}

/// The checks of WebAuthn Level 3 §7.1 (registration) and §7.2
/// (assertion) that do not need storage. The caller has read the client
/// data and spent its challenge (single use, in PostgreSQL) and, for an
/// assertion, found the credential and checked its user handle.
public enum PasskeyCeremonies {
    /// A registration: the client data's type and origin, the attestation
    /// object (``AttestationObject``), the RP ID hash and flags, a new
    /// credential with a key of an accepted algorithm. `credentialID`, when
    /// the client sends one, must be the attested credential's.
    public static func register(
        clientData: ClientData, attestationObject: [UInt8], credentialID: [UInt8]?, relyingParty: RelyingParty
    ) throws(PasskeyRefusal) -> RegisteredCredential {
        try clientData.check(.registration, origins: relyingParty.origins)
        let attestation = try AttestationObject(bytes: attestationObject)
        let data = attestation.authenticatorData
        try relyingParty.check(data)
        guard let credential = data.attestedCredential else { throw .credentialData }
        if let credentialID, credentialID != credential.credentialID { throw .credentialData }
        guard relyingParty.algorithms.contains(credential.publicKey.algorithm) else { throw .algorithm }
        return RegisteredCredential(
            credentialID: credential.credentialID, publicKey: credential.publicKeyBytes,
            algorithm: credential.publicKey.algorithm, signCount: data.signCount,
            userVerified: data.flags.contains(.userVerified), backupEligible: data.flags.contains(.backupEligible),
            backedUp: data.flags.contains(.backedUp), aaguid: credential.aaguid, attestationFormat: attestation.format)
    }

    /// An assertion with `credential`: the client data's type and origin,
    /// the RP ID hash and flags, the signature over `authenticatorData ‖
    /// SHA-256(clientDataJSON)` with the stored key, and the counter, which
    /// must grow unless it is 0 on both sides (synced passkeys send 0).
    /// Backup flags may differ from registration's (a passkey synced later).
    public static func assert(
        clientData: ClientData, clientDataJSON: [UInt8], authenticatorData: [UInt8], signature: [UInt8],
        credential: CredentialRecord, relyingParty: RelyingParty
    ) throws(PasskeyRefusal) -> AssertedCredential {
        try clientData.check(.assertion, origins: relyingParty.origins)
        let data: AuthenticatorData
        do {
            data = try AuthenticatorData(bytes: authenticatorData)
        } catch {
            throw .malformed
        }
        try relyingParty.check(data)
        guard data.attestedCredential == nil else { throw .credentialData }
        let key: COSEKey
        do {
            key = try COSEKey(bytes: credential.publicKey)
        } catch {
            throw .malformed
        }
        guard relyingParty.algorithms.contains(key.algorithm) else { throw .algorithm }
        let signed = authenticatorData + Array(SHA256.hash(data: clientDataJSON))
        guard key.isValidSignature(signature, for: signed) else { throw .signature }
        if data.signCount != 0 || credential.signCount != 0, data.signCount <= credential.signCount { throw .counter }
        return AssertedCredential(
            signCount: data.signCount, userVerified: data.flags.contains(.userVerified),
            backupEligible: data.flags.contains(.backupEligible), backedUp: data.flags.contains(.backedUp))
    }
}
