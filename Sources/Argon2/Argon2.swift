internal import CSodium

/// argon2id hashing and argon2i/argon2id verification through libsodium,
/// whose SIMD code is about three times faster than the reference build.
///
/// Every call blocks its thread for the whole hash (milliseconds, and
/// `memoryKiB` of memory): call it from a thread pool, never from the
/// cooperative executor.
public enum Argon2 {
    private static let initialized: Bool = sodium_init() >= 0

    /// Hashes `password` with argon2id into a PHC string with a fresh random salt.
    public static func hash(_ password: String, parameters: Argon2Parameters) throws(Argon2Error) -> String {
        guard initialized else { throw .hashingFailed }
        guard parameters.isWithinBounds else { throw .parametersOutOfBounds(parameters) }
        var output = [CChar](repeating: 0, count: Int(crypto_pwhash_strbytes()))
        let status = password.utf8CString.withUnsafeBufferPointer { passwordBytes in
            crypto_pwhash_str_alg(
                &output, passwordBytes.baseAddress!, UInt64(passwordBytes.count - 1),
                UInt64(parameters.iterations), parameters.memoryKiB * 1024, crypto_pwhash_alg_argon2id13())
        }
        guard status == 0 else { throw .hashingFailed }
        return output.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Whether `password` matches `phcString` (argon2id or argon2i, any lane count).
    ///
    /// - Throws: ``Argon2Error/malformedHash`` when `phcString` is not one
    ///   ``Argon2PHCString`` accepts, so a bad stored hash is never mistaken
    ///   for a wrong password.
    public static func verify(_ password: String, against phcString: String) throws(Argon2Error) -> Bool {
        guard initialized else { throw .hashingFailed }
        guard Argon2PHCString(phcString) != nil else { throw .malformedHash }
        let status = phcString.withCString { hash in
            password.utf8CString.withUnsafeBufferPointer { passwordBytes in
                crypto_pwhash_str_verify(hash, passwordBytes.baseAddress!, UInt64(passwordBytes.count - 1))
            }
        }
        return status == 0
    }

    /// Whether a stored hash should be replaced on the next successful login:
    /// it is not argon2id, or not made with `parameters`.
    public static func needsRehash(_ phcString: String, for parameters: Argon2Parameters) -> Bool {
        guard let parsed = Argon2PHCString(phcString) else { return true }
        return parsed.variant != .argon2id || parsed.parameters != parameters
    }
}
