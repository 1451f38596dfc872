import Crypto
public import Foundation

/// The deployment's key-encryption key: seals tenant private keys with AES-256-GCM
/// before they reach the database. Each sealed value is bound to a context
/// string (its row), so a ciphertext moved to another row does not open.
///
/// During a master-key rotation it also holds the key being retired
/// (``addingPrevious(_:)``), which only opens: values sealed under either
/// key open, new values are sealed under the current one.
public struct MasterKey: Sendable {
    private let key: SymmetricKey
    private let previous: SymmetricKey?

    /// Reads 32 bytes given as base64.
    public init(base64: String) throws(GatewayError) {
        let trimmed = base64.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed), bytes.count == 32 else {
            throw GatewayError(
                .invalidRequest, .invalidRequest, "the master key must be 32 random bytes, base64-encoded.")
        }
        self.key = SymmetricKey(data: bytes)
        self.previous = nil
    }

    private init(key: SymmetricKey, previous: SymmetricKey?) {
        self.key = key
        self.previous = previous
    }

    /// This key, also able to open what `old` sealed.
    public func addingPrevious(_ old: MasterKey) -> MasterKey {
        MasterKey(key: key, previous: old.key)
    }

    /// Whether a previous key is held (a rotation is under way).
    public var hasPrevious: Bool { previous != nil }

    /// A fresh random master key, base64-encoded.
    public static func generateBase64() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    /// A 32-byte key for one purpose (`"phone-code-hmac"`, say), derived
    /// with HKDF-SHA256, so the master key itself never leaves this type.
    public func derivedSecret(for purpose: String) -> [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data(purpose.utf8), outputByteCount: 32)
            .withUnsafeBytes { Array($0) }
    }

    /// Nonce, ciphertext and tag in one value.
    public func seal(_ plaintext: some DataProtocol, context: String) throws -> Data {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw GatewayError.internalError }
        return combined
    }

    /// Opens what ``seal(_:context:)`` produced with the same context, under
    /// the current key or the previous one.
    public func open(_ sealed: some DataProtocol, context: String) throws -> Data {
        let box = try AES.GCM.SealedBox(combined: sealed)
        do {
            return try AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
        } catch {
            guard let previous else { throw error }
            return try AES.GCM.open(box, using: previous, authenticating: Data(context.utf8))
        }
    }

    /// Whether `sealed` opens under the current key (so needs no re-sealing).
    public func opensWithCurrentKey(_ sealed: some DataProtocol, context: String) -> Bool {
        guard let box = try? AES.GCM.SealedBox(combined: sealed) else { return false }
        return (try? AES.GCM.open(box, using: key, authenticating: Data(context.utf8))) != nil
    }
}
