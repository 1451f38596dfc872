import Crypto
public import Foundation

/// The secret half of an admin token: 256 random bits, shown once to its
/// creator and stored only as a SHA-256 digest. A plain hash is enough here
/// (unlike passwords): the secret is random, so there is nothing to guess.
public struct AdminTokenSecret: Sendable {
    /// Marks the string as an identity-gateway admin token for secret scanners.
    public static let prefix = "igw_"

    public let text: String

    /// A new random secret.
    public static func generate() -> AdminTokenSecret {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return AdminTokenSecret(text: prefix + Base64URL.encode(bytes))
    }

    public init(text: String) {
        self.text = text
    }

    /// What the database stores and looks tokens up by.
    public var digest: Data {
        Data(SHA256.hash(data: Data(text.utf8)))
    }

    /// Whether `text` could be a token at all, before any database work:
    /// 32 to 512 visible ASCII characters (generated ones are `igw_` and 43
    /// more; a bootstrap token chosen by an operator only has to be long).
    public var isWellFormed: Bool {
        (32...512).contains(text.utf8.count) && text.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }
}
