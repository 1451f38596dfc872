import PasskeyPlugin

/// WebAuthn's CBOR (attestation objects, COSE keys) through the passkey
/// plugin's strict reader. No input crashes it or passes its limits; and
/// since it takes one encoding of each value only (shortest integers and
/// lengths, definite lengths, keys in the order read), what it reads
/// writes back to exactly the bytes it read.
enum CBORTarget {
    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        let reader = CBORReader()
        guard let value = try? reader.read(bytes) else { return }
        try invariant(write(value) == bytes, "\(bytes) read as \(value), which writes otherwise")
        let prefix = try? reader.readPrefix(bytes[...])
        try invariant(prefix?.1 == bytes.count && prefix?.0 == value, "the prefix reading disagrees")
        try invariant(depth(value) <= reader.maximumDepth, "nested past the limit")
    }

    static func write(_ value: CBORValue) -> [UInt8] {
        func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
            switch argument {
            case 0..<24: return [major << 5 | UInt8(argument)]
            case 24..<256: return [major << 5 | 24, UInt8(argument)]
            case 256..<65_536: return [major << 5 | 25] + bigEndian(argument, 2)
            case 65_536..<4_294_967_296: return [major << 5 | 26] + bigEndian(argument, 4)
            default: return [major << 5 | 27] + bigEndian(argument, 8)
            }
        }
        func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
            (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) }
        }
        switch value {
        case .unsigned(let number): return head(0, number)
        case .negative(let number): return head(1, number)
        case .bytes(let bytes): return head(2, UInt64(bytes.count)) + bytes
        case .text(let text): return head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .array(let items): return head(4, UInt64(items.count)) + items.flatMap(write)
        case .map(let entries): return head(5, UInt64(entries.count)) + entries.flatMap { write($0.key) + write($0.value) }
        case .bool(let flag): return [flag ? 0xf5 : 0xf4]
        case .null: return [0xf6]
        }
    }

    static func depth(_ value: CBORValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(depth).max() ?? 0)
        case .map(let entries): 1 + (entries.map { max(depth($0.key), depth($0.value)) }.max() ?? 0)
        default: 0
        }
    }
}
