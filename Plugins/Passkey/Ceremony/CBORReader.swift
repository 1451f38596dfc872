/// One CBOR data item (RFC 8949) of the kinds WebAuthn uses: integers, byte
/// and text strings, arrays, maps, `true`, `false` and `null`.
public indirect enum CBORValue: Sendable, Equatable {
    case unsigned(UInt64)
    /// The integer `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Members in the order they were read; keys are integers or text, never twice.
    case map([CBORMapEntry])
    case bool(Bool)
    case null

    /// The member of a map whose key is `key`.
    public subscript(key: CBORValue) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// The member of a map under the text key `key`.
    public subscript(text key: String) -> CBORValue? { self[.text(key)] }

    /// The member of a map under the integer key `key` (COSE's labels).
    public subscript(int key: Int64) -> CBORValue? { self[CBORValue.integer(key)] }

    /// `value` as CBOR's major type 0 or 1.
    public static func integer(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The integer this is, when it fits an `Int64`.
    public var integerValue: Int64? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: nil
        }
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { bytes } else { nil }
    }

    public var textValue: String? {
        if case .text(let text) = self { text } else { nil }
    }
}

public struct CBORMapEntry: Sendable, Equatable {
    public let key: CBORValue
    public let value: CBORValue

    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}

/// Why bytes are not a CBOR item this reader takes.
public enum CBORError: Error, Sendable, Equatable {
    /// The input ends inside an item.
    case truncated
    /// An item is followed by bytes that belong to none (`read(_:)` only).
    case trailingBytes
    /// Indefinite lengths (additional information 31), and the reserved 28 to 30.
    case indefiniteOrReserved
    /// A length or integer not written in its shortest form (RFC 8949 §4.2.1, CTAP2's canonical form).
    case notShortest
    /// Tags, floats, `undefined` and the other simple values: WebAuthn uses none.
    case unsupportedType
    case invalidUTF8
    /// A map key other than an integer or a text string.
    case unsupportedKey
    case duplicateKey
    /// Nested deeper, or holding more items, than the reader's limits.
    case tooDeep
    case tooManyItems
}

/// A strict, bounded CBOR reader for WebAuthn's attestation objects and
/// COSE keys: definite lengths only, every integer and length in its
/// shortest form, map keys integers or text and never repeated, text valid
/// UTF-8, no tags or floats; nesting and item counts bounded, so no input
/// makes it recurse or allocate without limit. Map keys need not be in
/// canonical order (the order is kept as read).
public struct CBORReader: Sendable {
    /// Containers within containers, the outermost counted.
    public var maximumDepth = 8
    /// Items in the whole input, containers and their members alike.
    public var maximumItems = 1024

    public init() {}

    /// The one item `bytes` holds, and nothing after it.
    public func read(_ bytes: [UInt8]) throws(CBORError) -> CBORValue {
        let (value, used) = try readPrefix(bytes[...])
        guard used == bytes.count else { throw .trailingBytes }
        return value
    }

    /// The item at the start of `bytes` and how many bytes it took (an
    /// authenticator's data holds a COSE key followed by extensions).
    public func readPrefix(_ bytes: ArraySlice<UInt8>) throws(CBORError) -> (CBORValue, Int) {
        var cursor = Cursor(bytes: bytes, position: bytes.startIndex, itemsLeft: maximumItems)
        let value = try cursor.item(depth: 0, maximumDepth: maximumDepth)
        return (value, cursor.position - bytes.startIndex)
    }

    private struct Cursor {
        let bytes: ArraySlice<UInt8>
        var position: Int
        var itemsLeft: Int

        mutating func byte() throws(CBORError) -> UInt8 {
            guard position < bytes.endIndex else { throw .truncated }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ count: UInt64) throws(CBORError) -> ArraySlice<UInt8> {
            guard count <= UInt64(bytes.endIndex - position) else { throw .truncated }
            let end = position + Int(count)
            defer { position = end }
            return bytes[position..<end]
        }

        /// The argument of an initial byte's additional information, in its shortest form.
        mutating func argument(_ info: UInt8) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let width = 1 << Int(info - 24)
                var value: UInt64 = 0
                for _ in 0..<width { value = value << 8 | UInt64(try byte()) }
                // The shortest form: a value below 24 fits the initial byte, others the narrowest width.
                let smallest: UInt64 = width == 1 ? 24 : 1 << (UInt64(width) * 4)
                guard value >= smallest else { throw .notShortest }
                return value
            default:
                throw .indefiniteOrReserved
            }
        }

        mutating func item(depth: Int, maximumDepth: Int) throws(CBORError) -> CBORValue {
            guard itemsLeft > 0 else { throw .tooManyItems }
            itemsLeft -= 1
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1f
            if major == 7 {
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 24...27: throw .unsupportedType
                case 28...31: throw .indefiniteOrReserved
                default: throw .unsupportedType
                }
            }
            let argument = try argument(info)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(Array(try take(argument)))
            case 3:
                let raw = try take(argument)
                guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8 }
                return .text(text)
            case 4:
                guard depth < maximumDepth else { throw .tooDeep }
                guard argument <= UInt64(itemsLeft) else { throw .tooManyItems }
                var elements: [CBORValue] = []
                elements.reserveCapacity(Int(argument))
                for _ in 0..<argument { elements.append(try item(depth: depth + 1, maximumDepth: maximumDepth)) }
                return .array(elements)
            case 5:
                guard depth < maximumDepth else { throw .tooDeep }
                guard argument <= UInt64(itemsLeft / 2) else { throw .tooManyItems }
                var entries: [CBORMapEntry] = []
                entries.reserveCapacity(Int(argument))
                for _ in 0..<argument {
                    let key = try item(depth: depth + 1, maximumDepth: maximumDepth)
                    switch key {
                    case .unsigned, .negative, .text: break
                    default: throw .unsupportedKey
                    }
                    guard !entries.contains(where: { $0.key == key }) else { throw .duplicateKey }
                    entries.append(CBORMapEntry(key, try item(depth: depth + 1, maximumDepth: maximumDepth)))
                }
                return .map(entries)
            default:
                // Major type 6: tags.
                throw .unsupportedType
            }
        }
    }
}
