/// Writes one JSON object member by member, in the order given. Every JSON
/// byte the gateway writes comes from here: token headers and claims (whose
/// bytes are signed: exact and cheap, no dictionary ordering in between), log
/// lines, error bodies, and through ``JSONCoding`` every `Encodable` answer.
public struct JSONObjectWriter {
    private(set) var bytes: [UInt8] = [UInt8(ascii: "{")]

    public init(reservingCapacity capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func add(_ key: String, _ value: String) {
        addKey(key)
        JSONBytes.appendString(value, to: &bytes)
    }

    public mutating func add(_ key: String, _ value: Int64) {
        addKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func add(_ key: String, _ value: Bool) {
        addKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func add(_ key: String, _ values: [String]) {
        addKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONBytes.appendString(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Adds any value, an object's members in ``JSONBytes`` order.
    public mutating func add(_ key: String, _ value: JSONValue) {
        addKey(key)
        JSONBytes.append(value, to: &bytes, indent: nil)
    }

    /// Adds `json`, JSON a writer finished (a nested object), as it is.
    public mutating func add(_ key: String, json: [UInt8]) {
        addKey(key)
        bytes.append(contentsOf: json)
    }

    /// Closes the object and returns its bytes.
    public consuming func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func addKey(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        JSONBytes.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }
}

/// How a value becomes JSON text: strings escaped as RFC 8259 requires and
/// no more (`/` and non-ASCII written as they are), integral numbers without
/// a fraction, others in the shortest form that reads back the same, and an
/// object's members in the byte order of their names (stable output).
enum JSONBytes {
    static func append(_ value: JSONValue, to bytes: inout [UInt8], indent: Int?) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): appendNumber(number, to: &bytes)
        case .string(let text): appendString(text, to: &bytes)
        case .array(let elements):
            appendContainer(open: "[", close: "]", elements, to: &bytes, indent: indent) { element, bytes, indent in
                append(element, to: &bytes, indent: indent)
            }
        case .object(let members):
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            appendContainer(open: "{", close: "}", sorted, to: &bytes, indent: indent) { member, bytes, indent in
                appendString(member.key, to: &bytes)
                bytes.append(contentsOf: (indent == nil ? ":" : ": ").utf8)
                append(member.value, to: &bytes, indent: indent)
            }
        }
    }

    private static func appendContainer<Element>(
        open: Unicode.Scalar, close: Unicode.Scalar, _ elements: [Element], to bytes: inout [UInt8], indent: Int?,
        _ appendElement: (Element, inout [UInt8], Int?) -> Void
    ) {
        bytes.append(UInt8(ascii: open))
        let inner = indent.map { $0 + 2 }
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            if let inner { newLine(inner, &bytes) }
            appendElement(element, &bytes, inner)
        }
        if let indent, !elements.isEmpty { newLine(indent, &bytes) }
        bytes.append(UInt8(ascii: close))
    }

    private static func newLine(_ indent: Int, _ bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
    }

    /// Integral values within ±2^53 as integers (`3`, not `3.0`); the rest in
    /// Swift's shortest round-tripping form. Never NaN or infinity: nothing
    /// the readers accept or the encoder takes holds one.
    static func appendNumber(_ number: Double, to bytes: inout [UInt8]) {
        if number.rounded() == number, abs(number) <= 9_007_199_254_740_992 {
            bytes.append(contentsOf: String(Int64(number)).utf8)
        } else {
            bytes.append(contentsOf: "\(number)".utf8)
        }
    }

    static func appendString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
