import Crypto

/// One app as a WebAuthn relying party: the domain its passkeys belong to,
/// the origins its ceremonies may run at, whether the user must be
/// verified, and the key algorithms it takes.
public struct RelyingParty: Sendable, Equatable {
    public let id: String
    public let origins: Set<String>
    public let requiresUserVerification: Bool
    public let algorithms: Set<COSEKey.Algorithm>

    public init(id: String, origins: Set<String>, requiresUserVerification: Bool, algorithms: Set<COSEKey.Algorithm>) {
        self.id = id
        self.origins = origins
        self.requiresUserVerification = requiresUserVerification
        self.algorithms = algorithms
    }

    /// SHA-256 of the RP ID: what authenticator data starts with.
    public var idHash: [UInt8] { Array(SHA256.hash(data: Array(id.utf8))) }

    /// The authenticator data's checks every ceremony shares: this RP's
    /// hash, the user present, and verified where required.
    func check(_ data: AuthenticatorData) throws(PasskeyRefusal) {
        guard data.rpIDHash == idHash else { throw .relyingParty }
        guard data.flags.contains(.userPresent) else { throw .userPresence }
        guard !requiresUserVerification || data.flags.contains(.userVerified) else { throw .userVerification }
    }
}
