/// The fields of an argon2 hash in PHC string format,
/// `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (salt and hash in
/// unpadded base64), read strictly so that a stored or imported hash with
/// absurd costs is refused before anyone spends memory on it.
public struct Argon2PHCString: Sendable, Equatable {
    public enum Variant: String, Sendable {
        case argon2i, argon2id
    }

    /// The longest string libsodium accepts (`crypto_pwhash_STRBYTES` less its NUL).
    public static let maximumLength = 127
    /// Bounds for hashes we did not make (imports): generous for legacy
    /// settings, tight enough that one verification cannot take the server down.
    public static let acceptedMemoryKiB = 8...1_048_576
    public static let acceptedIterations = 1...32
    public static let acceptedParallelism = 1...16

    public let variant: Variant
    public let parameters: Argon2Parameters

    public init?(_ text: String) {
        guard text.utf8.count <= Self.maximumLength else { return nil }
        let parts = text.split(separator: "$", omittingEmptySubsequences: false)
        // "", variant, "v=19", "m=..,t=..,p=..", salt, hash
        guard parts.count == 6, parts[0].isEmpty, let variant = Variant(rawValue: String(parts[1])),
            parts[2] == "v=19"
        else { return nil }
        var values: [Substring: Int] = [:]
        for pair in parts[3].split(separator: ",", omittingEmptySubsequences: false) {
            let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            // Decimal digits without a leading zero, as libsodium reads them (Int would also take a sign).
            guard keyValue.count == 2, (1...10).contains(keyValue[1].utf8.count),
                keyValue[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                keyValue[1].utf8.count == 1 || keyValue[1].utf8.first != UInt8(ascii: "0"),
                let value = Int(keyValue[1]), values[keyValue[0]] == nil
            else { return nil }
            values[keyValue[0]] = value
        }
        guard values.count == 3, let memory = values["m"], let iterations = values["t"], let lanes = values["p"],
            Self.acceptedMemoryKiB.contains(memory), Self.acceptedIterations.contains(iterations),
            Self.acceptedParallelism.contains(lanes), memory >= 8 * lanes,
            Self.isBase64(parts[4], minimumLength: 11), Self.isBase64(parts[5], minimumLength: 22)
        else { return nil }
        self.variant = variant
        self.parameters = Argon2Parameters(memoryKiB: memory, iterations: iterations, parallelism: lanes)
    }

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Unpadded standard base64 of at least `minimumLength` characters (a
    /// salt of 8 bytes, a hash of 16: libsodium's minimums), canonical as
    /// libsodium requires: the bits of the last character past the last
    /// whole byte are zero.
    private static func isBase64(_ text: Substring, minimumLength: Int) -> Bool {
        let alphabet = base64Alphabet
        let count = text.utf8.count
        guard count >= minimumLength, count % 4 != 1, text.utf8.allSatisfy(alphabet.contains),
            let last = text.utf8.last, let value = alphabet.firstIndex(of: last)
        else { return false }
        switch count % 4 {
        case 2: return value & 0x0F == 0
        case 3: return value & 0x03 == 0
        default: return true
        }
    }
}
