extension CBORValue {
    /// The value in CBOR's canonical form (RFC 8949 §4.2.1: shortest
    /// integers and lengths, definite lengths), map members in their order:
    /// for a value ``CBORReader`` read, exactly the bytes it read, since the
    /// reader takes no other encoding.
    public var encoded: [UInt8] {
        func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
            let width: Int =
                switch argument {
                case 0..<24: 0
                case 24..<256: 1
                case 256..<65_536: 2
                case 65_536..<4_294_967_296: 4
                default: 8
                }
            let info: UInt8 = width == 0 ? UInt8(argument) : [1: 24, 2: 25, 4: 26, 8: 27][width]!
            return [major << 5 | info] + (0..<width).reversed().map { UInt8(truncatingIfNeeded: argument >> (UInt64($0) * 8)) }
        }
        switch self {
        case .unsigned(let number): return head(0, number)
        case .negative(let number): return head(1, number)
        case .bytes(let bytes): return head(2, UInt64(bytes.count)) + bytes
        case .text(let text): return head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .array(let items): return head(4, UInt64(items.count)) + items.flatMap(\.encoded)
        case .map(let entries): return head(5, UInt64(entries.count)) + entries.flatMap { $0.key.encoded + $0.value.encoded }
        case .bool(let flag): return [flag ? 0xf5 : 0xf4]
        case .null: return [0xf6]
        }
    }
}
