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
    /// The optional claims, each under its field's name.
    public var profile: UserProfile

    public init(
        issuer: ProviderID, identity: VerifiedIdentity, nonce: String,
        issuedAt: Int64, lifetimeSeconds: Int
    ) {
        self.issuer = issuer
        self.principal = identity.userID
        self.issuedAt = issuedAt
        self.expiresAt = issuedAt + Int64(lifetimeSeconds)
        self.nonce = nonce
        self.profile = identity.profile
    }

    /// The claims set as JSON; optional claims appear only when non-empty.
    var jsonBytes: [UInt8] {
        var writer = JSONObjectWriter()
        writer.add("iss", issuer.description)
        writer.add("prn", principal)
        writer.add("iat", issuedAt)
        writer.add("exp", expiresAt)
        writer.add("nce", nonce)
        for (field, value) in profile.fields { writer.add(field.name, value) }
        return writer.finish()
    }
}
