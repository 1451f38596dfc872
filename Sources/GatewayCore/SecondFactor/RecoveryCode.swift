import Crypto

/// Single-use codes a user keeps for the day their authenticator is gone:
/// ten characters of lowercase base32 (50 random bits), shown as
/// `abcde-fghij`, stored only as a SHA-256 digest. A slow hash would add
/// nothing: 50 random bits are not guessed offline, and online guesses meet
/// the failure limit.
public enum RecoveryCode {
    public static let count = 10
    static let length = 10
    static let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// `count` new codes, as the user is shown them once.
    public static func generate(_ count: Int = RecoveryCode.count) -> [String] {
        var random = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            let characters = (0..<length).map { _ in alphabet[Int(random.next(upperBound: UInt8(alphabet.count)))] }
            return String(decoding: characters[..<5], as: UTF8.self) + "-" + String(decoding: characters[5...], as: UTF8.self)
        }
    }

    /// The digest stored for `code` as the user may type it (any case, with
    /// or without its dash or spaces); nil for what cannot be a code.
    public static func digest(of code: String) -> [UInt8]? {
        guard code.utf8.count <= 2 * length else { return nil }
        let characters = code.lowercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }
        guard characters.count == length, characters.allSatisfy(alphabet.contains) else { return nil }
        return Array(SHA256.hash(data: characters))
    }
}
