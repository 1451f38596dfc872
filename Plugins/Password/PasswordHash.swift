import Argon2
import Crypto
import Foundation

/// A stored password hash, by scheme: argon2id (what the gateway writes),
/// or argon2i and bcrypt imported from another system, which are upgraded
/// to argon2id on the user's next successful login.
struct PasswordHash: Sendable, Equatable {
    enum Scheme: String, Sendable {
        case argon2id, argon2i, bcrypt
    }

    /// bcrypt costs accepted on import: 15 already takes seconds a login.
    static let bcryptCosts = 4...15

    let text: String
    let scheme: Scheme

    /// Its text's SHA-256: what a sign-in checked, to tell a new password
    /// from it later (``PasswordVerifier/lapse(of:in:)``) without keeping the hash.
    var digest: [UInt8] { Array(SHA256.hash(data: Data(text.utf8))) }

    /// Reads `text`, or `nil` when it is no hash this gateway verifies.
    init?(_ text: String) {
        if let phc = Argon2PHCString(text) {
            self.scheme = phc.variant == .argon2id ? .argon2id : .argon2i
        } else if Self.isBcrypt(text) {
            self.scheme = .bcrypt
        } else {
            return nil
        }
        self.text = text
    }

    /// The memory verifying it takes: an argon2 hash's `m`; bcrypt's 4 KiB count as none.
    var memoryKiB: Int { Argon2PHCString(text)?.parameters.memoryKiB ?? 0 }

    /// The argon2 cost, for checking against the operator's ceiling; nil for bcrypt.
    var argon2Parameters: Argon2Parameters? { Argon2PHCString(text)?.parameters }

    /// The bcrypt cost, for checking against the operator's ceiling; nil for argon2.
    var bcryptCost: Int? {
        guard scheme == .bcrypt else { return nil }
        return Int(text.utf8.dropFirst(4).prefix(2).map { String(UnicodeScalar($0)) }.joined())
    }

    /// Whether a successful login should replace this hash.
    func needsRehash(for parameters: Argon2Parameters) -> Bool {
        scheme != .argon2id || Argon2.needsRehash(text, for: parameters)
    }

    /// `$2a$`, `$2b$` or `$2y$`, two-digit cost, 22 characters of salt and 31 of hash.
    private static func isBcrypt(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
            [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]),
            bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
            // Two decimal digits, as the bcrypt library reads them (Int would also take "+9").
            bytes[4...5].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let cost = Int(String(decoding: bytes[4...5], as: UTF8.self)), bcryptCosts.contains(cost)
        else { return false }
        return bytes[7...].allSatisfy { byte in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "/")
        }
    }
}
