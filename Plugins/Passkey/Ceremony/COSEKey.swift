import Crypto
import _CryptoExtras

/// A credential's public key as its authenticator sends it: a COSE_Key
/// (RFC 9052 §7, the algorithms of RFC 9053 and RFC 8812), read from the
/// strict CBOR reader's value. Three kinds are taken, each only with its own
/// algorithm: EC2 P-256 with ES256 (what every authenticator offers), RSA
/// with RS256 (Windows Hello), OKP Ed25519 with EdDSA. Other parameters
/// (a `kid`, say) are let be; a missing or mismatched one refuses the key.
public struct COSEKey: Sendable {
    public enum Algorithm: Int64, Sendable {
        case es256 = -7
        case edDSA = -8
        case rs256 = -257
    }

    public let algorithm: Algorithm
    private let material: Material

    private enum Material: Sendable {
        case p256(P256.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
    }

    /// COSE's labels (RFC 9052 §7.1, RFC 9053 §7).
    private enum Label {
        static let kty: Int64 = 1
        static let alg: Int64 = 3
        static let crv: Int64 = -1
        static let x: Int64 = -2
        static let y: Int64 = -3
        static let n: Int64 = -1
        static let e: Int64 = -2
    }

    /// Reads the key `bytes` hold, and nothing after it.
    public init(bytes: [UInt8]) throws(COSEKeyError) {
        let value: CBORValue
        do {
            value = try CBORReader().read(bytes)
        } catch {
            throw .unreadable(error)
        }
        try self.init(value)
    }

    public init(_ key: CBORValue) throws(COSEKeyError) {
        guard case .map = key else { throw .notAKey("a COSE key is a map") }
        guard let algorithmLabel = key[int: Label.alg]?.integerValue, let algorithm = Algorithm(rawValue: algorithmLabel) else {
            throw .unsupported("alg \(String(describing: key[int: Label.alg])) is not ES256, RS256 or EdDSA")
        }
        let keyType = key[int: Label.kty]?.integerValue
        self.algorithm = algorithm
        switch algorithm {
        case .es256:
            guard keyType == 2, key[int: Label.crv]?.integerValue == 1 else { throw .notAKey("ES256 needs an EC2 key on P-256 (crv 1)") }
            guard let x = key[int: Label.x]?.bytesValue, let y = key[int: Label.y]?.bytesValue, x.count == 32, y.count == 32 else {
                throw .notAKey("an EC2 key's x and y are 32-byte strings")
            }
            do {
                material = .p256(try P256.Signing.PublicKey(x963Representation: [0x04] + x + y))
            } catch {
                throw .notAKey("the point is not on P-256")
            }
        case .rs256:
            guard keyType == 3, let n = key[int: Label.n]?.bytesValue, let e = key[int: Label.e]?.bytesValue,
                !n.isEmpty, !e.isEmpty, n[0] != 0, e[0] != 0
            else {
                throw .notAKey("RS256 needs an RSA key whose n and e are byte strings without leading zeros")
            }
            do {
                material = .rsa(try _RSA.Signing.PublicKey(n: n, e: e))
            } catch {
                throw .notAKey("the RSA key is refused (2048 bits at least)")
            }
        case .edDSA:
            guard keyType == 1, key[int: Label.crv]?.integerValue == 6, let x = key[int: Label.x]?.bytesValue, x.count == 32
            else {
                throw .notAKey("EdDSA needs an OKP key on Ed25519 (crv 6) with a 32-byte x")
            }
            do {
                material = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            } catch {
                throw .notAKey("the Ed25519 key is refused")
            }
        }
    }

    /// Whether `signature` is this key's over `data`, as WebAuthn encodes
    /// each algorithm's signatures: ES256 as ASN.1 DER, RS256 as PKCS #1
    /// v1.5 over SHA-256, EdDSA as its 64 bytes.
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch material {
        case .p256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case .rsa(let key):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: .insecurePKCS1v1_5)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: data)
        }
    }
}

/// Why bytes are not a COSE key the passkey plugin takes.
public enum COSEKeyError: Error, Sendable, Equatable {
    case unreadable(CBORError)
    case notAKey(String)
    case unsupported(String)
}
