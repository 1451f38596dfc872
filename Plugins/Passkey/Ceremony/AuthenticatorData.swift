/// What an authenticator signs and reports about itself (WebAuthn Level 3,
/// §6.1): the RP ID's hash, the flags, the signature counter, and, at
/// registration, the attested credential (its AAGUID, id and COSE key), then
/// extensions if flagged. Read strictly: every byte belongs to a field, the
/// key and the extensions are strict CBOR, a credential id is at most 1 023
/// bytes, and a backup state without backup eligibility is refused.
public struct AuthenticatorData: Sendable {
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// User present.
        public static let userPresent = Flags(rawValue: 0x01)
        /// User verified (a PIN, a fingerprint, a face).
        public static let userVerified = Flags(rawValue: 0x04)
        /// Backup eligible: the credential may be synced (a passkey).
        public static let backupEligible = Flags(rawValue: 0x08)
        /// Backed up now.
        public static let backedUp = Flags(rawValue: 0x10)
        /// Attested credential data follows.
        public static let attestedCredential = Flags(rawValue: 0x40)
        /// Extensions follow.
        public static let extensions = Flags(rawValue: 0x80)
    }

    /// A new credential, as registration reports it.
    public struct AttestedCredential: Sendable {
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
        /// The COSE key's bytes as the authenticator wrote them (what is stored).
        public let publicKeyBytes: [UInt8]
        public let publicKey: COSEKey
    }

    public static let maximumCredentialIDBytes = 1023

    public let rpIDHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredential: AttestedCredential?
    public let extensions: CBORValue?

    public init(bytes: [UInt8]) throws(AuthenticatorDataError) {
        guard bytes.count >= 37 else { throw .truncated }
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if flags.contains(.backedUp) && !flags.contains(.backupEligible) { throw .backedUpWithoutEligibility }
        var position = 37
        if flags.contains(.attestedCredential) {
            guard bytes.count >= position + 18 else { throw .truncated }
            let aaguid = Array(bytes[position..<position + 16])
            let idLength = Int(bytes[position + 16]) << 8 | Int(bytes[position + 17])
            position += 18
            guard idLength <= Self.maximumCredentialIDBytes else { throw .credentialIDTooLong }
            guard bytes.count >= position + idLength else { throw .truncated }
            let credentialID = Array(bytes[position..<position + idLength])
            position += idLength
            let (keyValue, keyLength): (CBORValue, Int)
            do {
                (keyValue, keyLength) = try CBORReader().readPrefix(bytes[position...])
            } catch {
                throw .unreadableKey(.unreadable(error))
            }
            let key: COSEKey
            do {
                key = try COSEKey(keyValue)
            } catch {
                throw .unreadableKey(error)
            }
            attestedCredential = AttestedCredential(
                aaguid: aaguid, credentialID: credentialID, publicKeyBytes: Array(bytes[position..<position + keyLength]),
                publicKey: key)
            position += keyLength
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensions) {
            do {
                let (value, length) = try CBORReader().readPrefix(bytes[position...])
                guard case .map = value else { throw AuthenticatorDataError.unreadableExtensions(nil) }
                extensions = value
                position += length
            } catch let error as CBORError {
                throw .unreadableExtensions(error)
            } catch {
                throw .unreadableExtensions(nil)
            }
        } else {
            extensions = nil
        }
        guard position == bytes.count else { throw .leftoverBytes }
    }
}

/// Why bytes are not authenticator data the passkey plugin takes.
public enum AuthenticatorDataError: Error, Sendable, Equatable {
    case truncated
    case leftoverBytes
    case credentialIDTooLong
    /// BS set without BE: a credential backed up that may not be.
    case backedUpWithoutEligibility
    case unreadableKey(COSEKeyError)
    case unreadableExtensions(CBORError?)
}
