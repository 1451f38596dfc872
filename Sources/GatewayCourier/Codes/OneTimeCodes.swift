public import Crypto
import Foundation
public import GatewayCore

/// Makes one-time codes and the HMACs they are stored as, for every channel.
public struct OneTimeCodes: Sendable {
    /// The server's key for code HMACs (derived from the master key, one purpose per channel).
    public let key: SymmetricKey

    public init(key: SymmetricKey) {
        self.key = key
    }

    /// `length` digits from the system's cryptographic generator, uniform.
    public func generate(length: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in Character(String(UInt8.random(in: 0...9, using: &generator))) })
    }

    /// HMAC-SHA256 of the code, bound to the app and the address, so a
    /// stored value is useless anywhere else.
    public func mac(_ code: String, for address: some CodeAddress, in appID: AppID) -> [UInt8] {
        let input = Data("\(appID.uuid.lowercasedText)|\(address.text)|\(code)".utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: input, using: key))
    }

    /// Whether `text` is a code as a client may type it: 1 to 16 ASCII digits.
    public static func isWellFormed(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 16 && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
