public import Foundation

/// The canonical 36-character text of a UUID, written and read without
/// Foundation's `uuidString`, which formats through `snprintf` and parses
/// through `sscanf`: every token request writes several UUIDs (request id,
/// app, key, issuer) and reads one, so the difference shows in a profile.
extension UUID {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lowercase, the one form the
    /// gateway writes everywhere (headers, tokens, audit rows, metrics).
    public var lowercasedText: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { output in
                var position = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        output[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    output[position] = Self.hexDigits[Int(byte >> 4)]
                    output[position + 1] = Self.hexDigits[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }

    /// A random (version 4) UUID from the system generator (`getrandom` on
    /// Linux). Foundation's `UUID()` opens, reads and closes `/dev/urandom`
    /// each time: three system calls on a path that runs for every request.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { buffer in
            buffer.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            buffer.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
        }
        bytes.6 = bytes.6 & 0x0F | 0x40
        bytes.8 = bytes.8 & 0x3F | 0x80
        return UUID(uuid: bytes)
    }

    /// Parses the canonical 36-character form in either case; `nil` for
    /// anything else (no braces, no missing hyphens, no surrounding space).
    public init?(canonicalText text: some StringProtocol) {
        var parsed: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = text.utf8.count == 36 && withUnsafeMutableBytes(of: &parsed) { output -> Bool in
            var index = 0
            var high: UInt8?
            for (position, character) in text.utf8.enumerated() {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard character == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let nibble = character.hexDigitValue else { return false }
                if let first = high {
                    output[index] = first << 4 | nibble
                    index += 1
                    high = nil
                } else {
                    high = nibble
                }
            }
            return index == 16
        }
        guard valid else { return nil }
        self.init(uuid: parsed)
    }
}

extension UInt8 {
    /// The value of an ASCII hexadecimal digit in either case; `nil` for any other byte.
    public var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
