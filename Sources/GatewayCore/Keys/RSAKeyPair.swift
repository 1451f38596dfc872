import _CryptoExtras
import Foundation

/// An RSA private key parsed once, with the forms the gateway stores and
/// publishes. Keys under 2048 bits are refused.
public struct RSAKeyPair: Sendable {
    public static let minimumBits = 2048
    public static let generatableBits: Set<Int> = [2048, 3072, 4096]
    /// The largest key an operator may import: the largest the gateway generates.
    public static let maximumImportedBits = 4096

    /// Parses a key an operator imports, as ``init(pem:)`` does, and refuses
    /// what should not sign tokens: more than one PEM block (which would be
    /// used?), more than 4096 bits (each token's signature would cost many
    /// times a 2048-bit one, and some verifiers refuse such keys), and a
    /// public exponent that is even or under 65537 (e = 3 invites forged
    /// signatures against lax PKCS#1 v1.5 verifiers). Keys already stored are
    /// opened with ``init(pem:)`` and keep working.
    public static func imported(pem: String) throws(GatewayError) -> RSAKeyPair {
        guard pem.components(separatedBy: "-----BEGIN ").count == 2 else {
            throw .invalidRequest("private_key_pem must hold exactly one PEM block.")
        }
        let pair = try RSAKeyPair(pem: pem)
        guard pair.bits <= maximumImportedBits else {
            throw .invalidRequest(
                "private_key_pem is a \(pair.bits)-bit key; at most \(maximumImportedBits) bits are accepted.")
        }
        guard let exponent = try? pair.privateKey.publicKey.getKeyPrimitives().publicExponent,
            Self.isAcceptablePublicExponent(Array(exponent))
        else {
            throw .invalidRequest("private_key_pem's public exponent must be odd and at least 65537 (use 65537).")
        }
        return pair
    }

    /// Odd and at least 65537, from its big-endian bytes.
    static func isAcceptablePublicExponent(_ bigEndian: [UInt8]) -> Bool {
        let digits = bigEndian.drop { $0 == 0 }
        guard let last = digits.last, last & 1 == 1 else { return false }
        if digits.count > 3 { return true }
        return digits.reduce(0) { $0 << 8 | Int($1) } >= 65537
    }

    let privateKey: _RSA.Signing.PrivateKey

    /// Parses a PEM private key: PKCS#1 (`BEGIN RSA PRIVATE KEY`) or PKCS#8
    /// (`BEGIN PRIVATE KEY`). Errors are 400s that never echo the input.
    public init(pem: String) throws(GatewayError) {
        guard pem.contains("-----BEGIN RSA PRIVATE KEY-----") || pem.contains("-----BEGIN PRIVATE KEY-----") else {
            throw .invalidRequest("private_key_pem must be a PEM RSA private key (PKCS#1 or PKCS#8).")
        }
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem)
        } catch {
            throw .invalidRequest("private_key_pem could not be read as an RSA private key.")
        }
        guard key.keySizeInBits >= Self.minimumBits else {
            throw .invalidRequest(
                "private_key_pem is a \(key.keySizeInBits)-bit key; at least \(Self.minimumBits) bits are required.")
        }
        self.privateKey = key
    }

    /// Generates a new key. Slow (tens to hundreds of milliseconds): call it
    /// off the cooperative thread pool.
    public static func generate(bits: Int) throws(GatewayError) -> RSAKeyPair {
        guard generatableBits.contains(bits) else {
            throw .invalidRequest("bits must be one of 2048, 3072 or 4096.")
        }
        do {
            return RSAKeyPair(privateKey: try _RSA.Signing.PrivateKey(keySize: .init(bitCount: bits)))
        } catch {
            throw .internalError
        }
    }

    private init(privateKey: _RSA.Signing.PrivateKey) {
        self.privateKey = privateKey
    }

    public var bits: Int { privateKey.keySizeInBits }

    /// PKCS#8 PEM of the private key: the form the gateway seals and stores.
    public var privateKeyPEM: String { privateKey.pemRepresentation }

    /// SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`) of the public half.
    public var publicKeyPEM: String { privateKey.publicKey.pemRepresentation }

    /// A signer over this key through swift-crypto. The server signs with
    /// `OpenSSLRS256Signer` (about twice as fast where OpenSSL has an AVX-512
    /// IFMA path); this one keeps GatewayCore usable without libcrypto and is
    /// the reference the OpenSSL signer is tested byte for byte against.
    public var signer: any RS256Signer { SwiftCryptoRS256Signer(key: privateKey) }
}

/// RS256 through swift-crypto (BoringSSL), PKCS#1 v1.5 padding.
struct SwiftCryptoRS256Signer: RS256Signer {
    let key: _RSA.Signing.PrivateKey

    func sign(_ message: [UInt8]) throws -> [UInt8] {
        let signature = try key.signature(for: message, padding: .insecurePKCS1v1_5)
        return signature.withUnsafeBytes { Array($0) }
    }
}
