/// The claims of a Layer External Identity Token v1.
public struct IdentityTokenClaims: Sendable, Equatable {
    /// `iss`: the tenant's Layer provider id.
    public var issuer: ProviderID
    /// `prn`: the user id.
    public var principal: String
    /// `iat`, seconds since the Unix epoch (UTC).
    public var issuedAt: Int64
    /// `exp`, seconds since the Unix epoch (UTC).
    public var expiresAt: Int64
    /// `nce`: the nonce, byte for byte as the client sent it.
    public var nonce: String
    public var firstName: String?
    public var lastName: String?
    public var displayName: String?
    public var avatarURL: String?

    public init(
        issuer: ProviderID, identity: VerifiedIdentity, nonce: String,
        issuedAt: Int64, lifetimeSeconds: Int
    ) {
        self.issuer = issuer
        self.principal = identity.userID
        self.issuedAt = issuedAt
        self.expiresAt = issuedAt + Int64(lifetimeSeconds)
        self.nonce = nonce
        self.firstName = identity.firstName
        self.lastName = identity.lastName
        self.displayName = identity.displayName
        self.avatarURL = identity.avatarURL
    }

    /// The claims set as JSON; optional claims appear only when non-empty.
    var jsonBytes: [UInt8] {
        var writer = JSONObjectWriter()
        writer.add("iss", issuer.description)
        writer.add("prn", principal)
        writer.add("iat", issuedAt)
        writer.add("exp", expiresAt)
        writer.add("nce", nonce)
        for (name, value) in [
            ("first_name", firstName), ("last_name", lastName),
            ("display_name", displayName), ("avatar_url", avatarURL),
        ] {
            if let value, !value.isEmpty { writer.add(name, value) }
        }
        return writer.finish()
    }
}
