import Crypto
import Foundation
import GatewayCore
import _CryptoExtras

/// One signing key of a provider's JWK set: RSA for RS256 or P-256 for
/// ES256, the only algorithms an ID token may use here.
enum ProviderKey: Sendable {
    case rsa(_RSA.Signing.PublicKey)
    case p256(P256.Signing.PublicKey)

    /// The JWS algorithm this key verifies.
    var algorithm: String {
        switch self {
        case .rsa: "RS256"
        case .p256: "ES256"
        }
    }

    /// Whether `signature` over `input` verifies under this key with `algorithm`
    /// (which must be the key's own: a token cannot choose how its key is used).
    func verifies(_ signature: [UInt8], of input: [UInt8], algorithm: String) -> Bool {
        guard algorithm == self.algorithm else { return false }
        switch self {
        case .rsa(let key):
            return key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
        case .p256(let key):
            guard signature.count == 64, let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else {
                return false
            }
            return key.isValidSignature(parsed, for: input)
        }
    }
}

/// A provider's keys by `kid`, read from its JWK set (RFC 7517). Keys of
/// other types, curves or uses are left out; a set with no usable key, more
/// than ``maximumKeys`` keys, or that is not JSON is refused.
struct ProviderKeySet: Sendable {
    static let maximumKeys = 32
    static let maximumBytes = 64 * 1024

    let keys: [String: ProviderKey]

    init(keys: [String: ProviderKey]) {
        self.keys = keys
    }

    init(json bytes: [UInt8]) throws(KeySetProblem) {
        guard bytes.count <= Self.maximumBytes else { throw KeySetProblem("the key set is larger than 64 KiB") }
        guard case .object(let root)? = try? JSONCoding.value(bytes),
            case .array(let entries)? = root["keys"]
        else { throw KeySetProblem("the key set is not a JSON object with a \"keys\" array") }
        guard entries.count <= Self.maximumKeys else { throw KeySetProblem("the key set holds over \(Self.maximumKeys) keys") }
        var keys: [String: ProviderKey] = [:]
        for case .object(let entry) in entries {
            guard case .string(let kid)? = entry["kid"], !kid.isEmpty, kid.utf8.count <= 256,
                let key = Self.key(entry), keys[kid] == nil
            else { continue }
            keys[kid] = key
        }
        guard !keys.isEmpty else { throw KeySetProblem("the key set holds no RS256 or ES256 signing key with a kid") }
        self.keys = keys
    }

    private static func key(_ entry: [String: JSONValue]) -> ProviderKey? {
        if case .string(let use)? = entry["use"], use != "sig" { return nil }
        func bytes(_ name: String) -> [UInt8]? {
            guard case .string(let text)? = entry[name] else { return nil }
            return Base64URL.decode(text).map(Array.init)
        }
        switch entry["kty"] {
        case .string("RSA")?:
            if let algorithm = entry["alg"], algorithm != .string("RS256") { return nil }
            guard let n = bytes("n"), let e = bytes("e"), n.count >= 256, n.count <= 512, e.count <= 8,
                let key = try? _RSA.Signing.PublicKey(n: n, e: e)
            else { return nil }
            return .rsa(key)
        case .string("EC")?:
            if let algorithm = entry["alg"], algorithm != .string("ES256") { return nil }
            guard entry["crv"] == .string("P-256"), let x = bytes("x"), let y = bytes("y"), x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(x963Representation: [0x04] + x + y)
            else { return nil }
            return .p256(key)
        default:
            return nil
        }
    }
}

/// Why a provider's key set (or discovery document) was not taken.
struct KeySetProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
