import Crypto
import Foundation

/// The ticket a sign-in whose first factor was right is answered with, for
/// its second step: `mt1.` and the base64url of 32 random bytes. It
/// carries nothing but its randomness; the gateway keeps its SHA-256 with
/// what it stands for (``StoredMFATicket``).
public struct MFATicket: Sendable, Equatable {
    static let prefix = "mt1."
    public static let textBytes = 4 + 43
    public let secret: [UInt8]

    public init() {
        secret = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// Reads a ticket as a client sends it; `nil` for anything else.
    public init?(text: String) {
        guard text.utf8.count == Self.textBytes, text.hasPrefix(Self.prefix),
            let bytes = Base64URL.decode(text.dropFirst(Self.prefix.count)), bytes.count == 32
        else { return nil }
        secret = Array(bytes)
        guard self.text == text else { return nil }
    }

    public var text: String { Self.prefix + Base64URL.encode(secret) }

    /// What the gateway stores of it.
    public var digest: [UInt8] { Array(SHA256.hash(data: secret)) }
}

extension MFATicket: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never the ticket.
    public var description: String { "an MFA ticket" }
    public var debugDescription: String { description }
}
