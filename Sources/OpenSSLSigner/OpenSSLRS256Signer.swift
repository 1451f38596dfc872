internal import COpenSSL
public import GatewayCore

/// RS256 through the system's OpenSSL 3 libcrypto, which signs about twice
/// as fast as swift-crypto's bundled BoringSSL on CPUs with AVX-512 IFMA.
///
/// The key is parsed once into an `EVP_PKEY` held for the signer's life.
/// Each signature uses its own `EVP_MD_CTX`, so one signer may be used from
/// many threads at once (OpenSSL only reads a key while signing with it).
/// That is why the class is `@unchecked Sendable`: its two pointers are set
/// once, freed once in `deinit`, and only read in between.
public final class OpenSSLRS256Signer: RS256Signer, @unchecked Sendable {
    private let key: OpaquePointer
    private let digest: OpaquePointer
    /// Bytes in a signature: the modulus size.
    public let signatureBytes: Int

    /// Parses a PEM private key (PKCS#8 or PKCS#1).
    public init(privateKeyPEM pem: String) throws(OpenSSLError) {
        let parsed: OpaquePointer? = pem.utf8CString.withUnsafeBufferPointer { text in
            guard let bio = BIO_new_mem_buf(text.baseAddress, Int32(text.count - 1)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let parsed else { throw OpenSSLError.drain("reading the private key") }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_RSA else {
            EVP_PKEY_free(parsed)
            throw OpenSSLError(operation: "reading the private key", reason: "not an RSA key")
        }
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else {
            EVP_PKEY_free(parsed)
            throw OpenSSLError.drain("fetching SHA-256")
        }
        self.key = parsed
        self.digest = digest
        self.signatureBytes = Int(EVP_PKEY_get_size(parsed))
    }

    /// Parses the private half of `pair`.
    public convenience init(_ pair: RSAKeyPair) throws(OpenSSLError) {
        try self.init(privateKeyPEM: pair.privateKeyPEM)
    }

    deinit {
        EVP_PKEY_free(key)
        EVP_MD_free(digest)
    }

    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError.drain("allocating a digest context") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, digest, nil, key) == 1,
            EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1
        else { throw OpenSSLError.drain("starting a signature") }
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        var length = signatureBytes
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw OpenSSLError.drain("signing")
        }
        if length != signature.count { signature.removeLast(signature.count - length) }
        return signature
    }
}

/// A libcrypto failure, with OpenSSL's reason (never key material).
public struct OpenSSLError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let reason: String

    public var description: String { "OpenSSL failed \(operation): \(reason)" }

    /// Takes the thread's OpenSSL error queue, so it never leaks into a later call.
    static func drain(_ operation: String) -> OpenSSLError {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        return OpenSSLError(operation: operation, reason: reasons.isEmpty ? "unknown error" : reasons.joined(separator: "; "))
    }
}
