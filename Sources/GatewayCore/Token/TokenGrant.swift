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
    /// When the user last proved who they are (OpenID Connect's `auth_time`):
    /// `issuedAt` for a sign-in, the session's sign-in for a refresh.
    public let authTime: Int64
    /// How they proved it (RFC 8176 `amr` values); empty when not known.
    public let methods: [String]

    public init(
        app: AppSettings, identity: VerifiedIdentity, nonce: String, issuedAt: Int64, authTime: Int64? = nil,
        methods: [String] = []
    ) {
        self.app = app
        self.identity = identity
        self.nonce = nonce
        self.issuedAt = issuedAt
        self.authTime = authTime ?? issuedAt
        self.methods = methods
    }

    /// OpenID Connect's `acr` for ``methods``: `aal2` when two factors were
    /// checked (`mfa`), `aal1` for one, nil when the methods are not known.
    /// (The levels of NIST SP 800-63B, as Supabase names them.)
    public var assuranceLevel: String? {
        guard !methods.isEmpty else { return nil }
        return AuthenticationMethods.areMultipleFactors(methods) ? "aal2" : "aal1"
    }
}
