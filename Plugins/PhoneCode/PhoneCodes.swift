import Crypto
import Foundation
import GatewayCore

/// Makes codes and the HMACs they are stored as.
struct PhoneCodes: Sendable {
    /// The server's key for code HMACs (derived from the master key).
    let key: SymmetricKey

    /// `length` digits from the system's cryptographic generator, uniform.
    func generate(length: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in Character(String(UInt8.random(in: 0...9, using: &generator))) })
    }

    /// HMAC-SHA256 of the code, bound to the app and the number, so a stored
    /// value is useless anywhere else.
    func mac(_ code: String, for number: PhoneNumber, in appID: AppID) -> [UInt8] {
        let input = Data("\(appID.uuid.lowercasedText)|\(number.text)|\(code)".utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: input, using: key))
    }
}
