import GatewayCore
import GatewayCourier

/// A phone number in E.164 form: `+` and 8 to 15 digits, nothing else.
struct PhoneNumber: CodeAddress {
    let text: String

    init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 9, bytes.count <= 16, bytes[0] == UInt8(ascii: "+"),
            bytes.dropFirst().allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), bytes[1] != UInt8(ascii: "0")
        else { return nil }
        self.text = text
    }

    /// Reads `field`, or throws the 400 that names it.
    static func parse(_ text: String?, field: String) throws(GatewayError) -> PhoneNumber {
        guard let text else { throw .invalidRequest("\(field) is required.") }
        guard let number = PhoneNumber(text) else {
            throw .invalidRequest("\(field) must be an E.164 number: + and 8 to 15 digits, e.g. +4915123456789.")
        }
        return number
    }
}

/// The phone channel's codes: `phone_codes`, keyed by the number (Migrations/0001_phone_codes.sql).
enum PhoneCodeTable: CodeTable {
    typealias Address = PhoneNumber
    static let name = "phone_codes"
    static let addressColumn = "phone_number"
}
