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
        var header = JSONObjectWriter(reservingCapacity: 128)
        header.add("typ", "JWT")
        header.add("alg", "RS256")
        header.add("cty", "layer-eit;v=1")
        header.add("kid", keyID.description)
        self.headerPrefix = Array((Base64URL.encode(header.finish()) + ".").utf8)
    }

    /// The compact JWS `header.claims.signature`.
    public func mint(_ claims: IdentityTokenClaims) throws -> String {
        var signingInput = headerPrefix
        signingInput.append(contentsOf: Base64URL.encode(claims.jsonBytes).utf8)
        let signature = try signer.sign(signingInput)
        return String(decoding: signingInput, as: UTF8.self) + "." + Base64URL.encode(signature)
    }
}
