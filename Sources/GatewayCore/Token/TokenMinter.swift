/// Mints one app's tokens of one profile; built once per app load.
public protocol TokenMinter: Sendable {
    /// The app key the tokens are signed with, for the issued row; `nil` for
    /// profiles that sign with a secret of the vendor's.
    var keyID: KeyID? { get }

    /// Why `grant` cannot become this profile's token (a user id longer than
    /// the vendor takes, say), asked before the issued row is written.
    func refusal(for grant: TokenGrant) -> GatewayError?

    /// The token for `grant`. Runs on the signing threads: it may take a core
    /// for a millisecond, never wait.
    func mint(_ grant: TokenGrant) throws -> String

    /// Every problem `token` has as a token of this profile for this app,
    /// its signature first among them: none means this app could have
    /// issued it. Expiry is not judged, so a token can be checked after the
    /// fact (``TokenValidationReport``).
    func problems(in token: ParsedIdentityToken) -> [TokenValidationReport.Problem]
}

extension TokenMinter {
    public func refusal(for grant: TokenGrant) -> GatewayError? { nil }
}

/// The app's own RSA keys, as profiles that sign with them see them.
public struct AppSigningKeys: Sendable {
    /// The key that signs, and its signer; `nil` while the app has no active key.
    public let active: (keyID: KeyID, signer: any RS256Signer)?
    /// The public half (PEM) of every key of the app (next, active,
    /// retired), by key id: what a token of the app is checked against.
    public let publicKeys: [KeyID: String]

    /// The deployment's signer for an RSA key a profile brings itself (a
    /// Firebase service account's): OpenSSL's in the server, as for app keys.
    public let makeSigner: @Sendable (RSAKeyPair) throws -> any RS256Signer

    public init(
        active: (keyID: KeyID, signer: any RS256Signer)?, publicKeys: [KeyID: String],
        makeSigner: @escaping @Sendable (RSAKeyPair) throws -> any RS256Signer = { $0.signer }
    ) {
        self.active = active
        self.publicKeys = publicKeys
        self.makeSigner = makeSigner
    }

    /// None at all: how settings are checked before any key is at hand.
    public static let none = AppSigningKeys(active: nil, publicKeys: [:])

    /// Whether `token` carries an RS256 signature by the app key its `kid` names.
    public func signed(_ token: ParsedIdentityToken) -> Bool {
        guard let keyID = token.header["kid"]?.stringValue.flatMap(KeyID.init), let pem = publicKeys[keyID] else { return false }
        return token.hasValidSignature(publicKeyPEM: pem)
    }

    /// The active key, or the 503 that says an operator must activate one.
    public func requireActive() throws(GatewayError) -> (keyID: KeyID, signer: any RS256Signer) {
        guard let active else {
            throw GatewayError(.noSigningKey, .unavailable, "This app has no active signing key; an operator must activate one.")
        }
        return active
    }
}
