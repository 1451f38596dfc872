public import Foundation

/// Base64url without padding (RFC 7515 §2), the alphabet of compact JWTs.
/// Works on bytes directly: it runs three times for every token minted.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of each alphabet byte, or 0xFF for bytes outside it.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(index) }
        return values
    }()

    public static func encode(_ bytes: some DataProtocol) -> String {
        var output: [UInt8] = []
        append(Array(bytes), to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the encoding of `input` to `output`: a token is built in one
    /// buffer, not from strings joined.
    public static func append(_ input: [UInt8], to output: inout [UInt8]) {
        output.reserveCapacity(output.count + (input.count * 4 + 2) / 3)
        var index = 0
        while index + 2 < input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            output.append(alphabet[Int(chunk >> 6 & 63)])
            output.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        switch input.count - index {
        case 2:
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            output.append(alphabet[Int(chunk >> 6 & 63)])
        case 1:
            let chunk = UInt32(input[index]) << 16
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
        default:
            break
        }
    }

    /// `nil` unless `text` is unpadded base64url.
    public static func decode(_ text: some StringProtocol) -> Data? {
        let input = Array(text.utf8)
        guard input.count % 4 != 1 else { return nil }
        var output = Data()
        output.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            let value = values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(accumulator >> UInt32(bits) & 0xFF))
            }
        }
        return output
    }
}
