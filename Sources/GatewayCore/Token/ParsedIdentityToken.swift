import _CryptoExtras
public import Crypto
import Foundation

/// A compact JWS split into its parts, for checking a token: the gateway's
/// own in tests, a client's in the validation endpoint. Parsing checks only
/// the shape; ``hasValidSignature(publicKeyPEM:)`` checks the signature.
public struct ParsedIdentityToken: Sendable {
    public static let maximumLength = 16 * 1024

    public let header: [String: JSONValue]
    public let claims: [String: JSONValue]
    /// The bytes the signature covers (`header.claims`, as sent).
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    /// `nil` unless `compact` is three base64url parts whose first two are JSON objects.
    public init?(compact: String) {
        guard compact.utf8.count <= Self.maximumLength else { return nil }
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? StrictJSONReader.object(Array(headerBytes)),
            let claims = try? StrictJSONReader.object(Array(claimBytes))
        else { return nil }
        self.header = header
        self.claims = claims
        self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        self.signature = Array(signature)
    }

    /// Whether the HS256 signature verifies under `secret`, in constant time.
    public func hasValidHS256Signature(secret: SymmetricKey) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signingInput, using: secret)
    }

    /// Whether the RS256 signature verifies under the PEM public key.
    public func hasValidSignature(publicKeyPEM: String) -> Bool {
        guard let key = try? _RSA.Signing.PublicKey(unsafePEMRepresentation: publicKeyPEM) else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: signingInput, padding: .insecurePKCS1v1_5)
    }
}
