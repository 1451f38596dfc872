/// A tenant key ready to mint Layer identity tokens: its key id, its signer
/// and its JOSE header, encoded once for the key's whole life.
public struct TokenSigningKey: Sendable {
    public let keyID: KeyID
    private let signer: any RS256Signer
    /// `base64url(header) + "."`, the constant start of every token.
    private let headerPrefix: [UInt8]

    public init(keyID: KeyID, signer: any RS256Signer) {
        self.keyID = keyID
        self.signer = signer
        self.headerPrefix = CompactJWS.headerPrefix(["typ": "JWT", "alg": "RS256", "cty": "layer-eit;v=1", "kid": keyID.description])
    }

    /// The compact JWS `header.claims.signature`.
    public func mint(_ claims: IdentityTokenClaims) throws -> String {
        try CompactJWS.encode(headerPrefix: headerPrefix, claims: claims.jsonBytes, sign: signer.sign)
    }
}
