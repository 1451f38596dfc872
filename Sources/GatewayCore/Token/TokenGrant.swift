/// What every token profile mints from: one verified identity, for one app,
/// at one time. The same grant comes to every profile; each chooses which
/// facts its dialect carries.
public struct TokenGrant: Sendable, Equatable {
    public let app: AppSettings
    public let identity: VerifiedIdentity
    /// The nonce, byte for byte as the client sent it.
    public let nonce: String
    /// Seconds since the Unix epoch (UTC): the moment the credential was accepted.
    public let issuedAt: Int64

    public init(app: AppSettings, identity: VerifiedIdentity, nonce: String, issuedAt: Int64) {
        self.app = app
        self.identity = identity
        self.nonce = nonce
        self.issuedAt = issuedAt
    }
}
