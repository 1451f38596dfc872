/// An `application/x-www-form-urlencoded` body (WHATWG URL, "urlencoded
/// serializing"): each byte of a name or value outside letters, digits
/// and `*-._` written as `%XX`, a space too (never `+`), in the order given.
/// Every call out that posts a form writes it here (an SMS provider's, Apple's).
public enum FormBody {
    public static let contentType = "application/x-www-form-urlencoded"

    public static func encode(_ fields: [(name: String, value: String)]) -> String {
        fields.map { "\(escaped($0.name))=\(escaped($0.value))" }.joined(separator: "&")
    }

    static func escaped(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
