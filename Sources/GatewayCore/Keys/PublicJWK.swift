import _CryptoExtras
import Foundation

/// An RSA public key as a JSON Web Key (RFC 7517), for JWKS documents.
public struct PublicJWK: Sendable, Codable, Equatable {
    public let kty: String
    public let kid: String
    public let alg: String
    public let use: String
    public let n: String
    public let e: String

    /// The JWK of a `BEGIN PUBLIC KEY` PEM; `nil` if it is not an RSA public key.
    public init?(publicKeyPEM: String, keyID: KeyID) {
        guard let key = try? _RSA.Signing.PublicKey(unsafePEMRepresentation: publicKeyPEM),
            let primitives = try? key.getKeyPrimitives()
        else { return nil }
        self.kty = "RSA"
        self.kid = keyID.description
        self.alg = "RS256"
        self.use = "sig"
        self.n = Base64URL.encode(primitives.modulus.drop { $0 == 0 })
        self.e = Base64URL.encode(primitives.publicExponent.drop { $0 == 0 })
    }
}
