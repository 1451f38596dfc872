import Crypto
public import Foundation

/// The deployment's key-encryption key: seals tenant private keys with AES-256-GCM
/// before they reach the database. Each sealed value is bound to a context
/// string (its row), so a ciphertext moved to another row does not open.
public struct MasterKey: Sendable {
    private let key: SymmetricKey

    /// Reads 32 bytes given as base64.
    public init(base64: String) throws(GatewayError) {
        let trimmed = base64.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed), bytes.count == 32 else {
            throw GatewayError(
                .invalidRequest, status: 400, "the master key must be 32 random bytes, base64-encoded.")
        }
        self.key = SymmetricKey(data: bytes)
    }

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

    /// Opens what ``seal(_:context:)`` produced with the same key and context.
    public func open(_ sealed: some DataProtocol, context: String) throws -> Data {
        let box = try AES.GCM.SealedBox(combined: sealed)
        return try AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
    }
}
