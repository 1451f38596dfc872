
/// A strict one-pass JSON reader (RFC 8259) over a body's bytes. Stricter
/// than `JSONDecoder` in three ways: a member named twice is refused rather
/// than one copy silently winning, so no two readers of the same body can
/// disagree about it; nesting deeper than ``maximumDepth`` is refused before
/// it can exhaust the stack; and invalid UTF-8, unpaired surrogates and raw
/// control characters in strings are refused rather than replaced.
package struct StrictJSONReader {
    package enum Failure: Error, Equatable {
        /// Not JSON, or not the JSON wanted.
        case malformed
        /// A member name appears twice in one object.
        case duplicateMember
        /// Arrays and objects nest deeper than ``StrictJSONReader/maximumDepth``.
        case tooDeep

        /// The 400 a request's JSON that fails this way is answered with;
        /// `subject` names that JSON ("body", "line").
        package func gatewayError(subject: String = "body") -> GatewayError {
            switch self {
            case .malformed: .invalidRequest("The \(subject) is not a JSON object.")
            case .duplicateMember: .invalidRequest("The \(subject) names a member twice.")
            case .tooDeep:
                .invalidRequest("The \(subject) nests arrays and objects deeper than \(StrictJSONReader.maximumDepth) levels.")
            }
        }
    }

    /// Nesting allowed below the outermost value; deeper bodies are refused.
    package static let maximumDepth = 32

    /// Reads `bytes` as one JSON object, keeping every value.
    package static func object(_ bytes: [UInt8]) throws(Failure) -> [String: JSONValue] {
        var reader = StrictJSONReader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{"), case .object(let members) = try reader.readValue(depth: 0) else {
            throw .malformed
        }
        reader.skipWhitespace()
        guard reader.atEnd else { throw .malformed }
        return members
    }

    /// Reads `bytes` as one JSON value of any kind.
    package static func value(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var reader = StrictJSONReader(bytes: bytes)
        let value = try reader.readValue(depth: 0)
        reader.skipWhitespace()
        guard reader.atEnd else { throw .malformed }
        return value
    }

    /// A value read where a string was wanted.
    package enum OptionalString {
        case string(String)
        case null
        /// Any other JSON value (already checked and skipped).
        case other
    }

    private let bytes: [UInt8]
    private var index = 0

    package init(bytes: [UInt8]) { self.bytes = bytes }

    package var atEnd: Bool { index == bytes.count }

    package func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    package mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        skipWhitespace()
        guard peek() == byte else { throw .malformed }
        index += 1
    }

    /// Reads `{ "name": value, ... }`, calling `member` to read each value.
    package mutating func readObject(
        _ member: (String, inout StrictJSONReader) throws(Failure) -> Void
    ) throws(Failure) {
        try expect(UInt8(ascii: "{"))
        if closes(UInt8(ascii: "}")) { return }
        var names: Set<String> = []
        repeat {
            skipWhitespace()
            let name = try readString()
            guard names.insert(name).inserted else { throw .duplicateMember }
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            try member(name, &self)
        } while try continues(closing: UInt8(ascii: "}"))
    }

    /// Passes over `closing` if it comes next: an empty object or array.
    private mutating func closes(_ closing: UInt8) -> Bool {
        skipWhitespace()
        guard peek() == closing else { return false }
        index += 1
        return true
    }

    /// After an element: `true` past a comma, `false` past `closing`.
    private mutating func continues(closing: UInt8) throws(Failure) -> Bool {
        skipWhitespace()
        switch peek() ?? 0 {
        case UInt8(ascii: ","):
            index += 1
            return true
        case closing:
            index += 1
            return false
        default:
            throw .malformed
        }
    }

    package mutating func readOptionalString() throws(Failure) -> OptionalString {
        skipWhitespace()
        switch peek() ?? 0 {
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "n"):
            try readLiteral("null")
            return .null
        default:
            try skipValue(depth: 1)
            return .other
        }
    }

    /// Checks and passes over one value of any kind.
    package mutating func skipValue(depth: Int) throws(Failure) {
        guard depth <= StrictJSONReader.maximumDepth else { throw .tooDeep }
        skipWhitespace()
        switch peek() ?? 0 {
        case UInt8(ascii: "\""): _ = try readString()
        case UInt8(ascii: "{"): try readObject { _, reader throws(Failure) in try reader.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            index += 1
            if closes(UInt8(ascii: "]")) { return }
            repeat {
                try skipValue(depth: depth + 1)
            } while try continues(closing: UInt8(ascii: "]"))
        case UInt8(ascii: "t"): try readLiteral("true")
        case UInt8(ascii: "f"): try readLiteral("false")
        case UInt8(ascii: "n"): try readLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
        default: throw .malformed
        }
    }

    /// Reads one value of any kind; numbers as `Double`, as `JSONDecoder` would.
    package mutating func readValue(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw .tooDeep }
        skipWhitespace()
        switch peek() ?? 0 {
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "{"):
            var members: [String: JSONValue] = [:]
            try readObject { name, reader throws(Failure) in members[name] = try reader.readValue(depth: depth + 1) }
            return .object(members)
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONValue] = []
            if closes(UInt8(ascii: "]")) { return .array(elements) }
            repeat {
                elements.append(try readValue(depth: depth + 1))
            } while try continues(closing: UInt8(ascii: "]"))
            return .array(elements)
        case UInt8(ascii: "t"):
            try readLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try readLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try readLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = index
            try skipNumber()
            guard let number = Double(String(decoding: bytes[start..<index], as: UTF8.self)), number.isFinite else {
                throw .malformed
            }
            return .number(number)
        default:
            throw .malformed
        }
    }

    private mutating func readLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count,
            literal.withUTF8Buffer({ bytes[index..<(index + count)].elementsEqual($0) })
        else { throw .malformed }
        index += count
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func skipNumber() throws(Failure) {
        if peek() == UInt8(ascii: "-") { index += 1 }
        if peek() == UInt8(ascii: "0") {
            index += 1
        } else {
            guard skipDigits() else { throw .malformed }
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() else { throw .malformed }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() else { throw .malformed }
        }
    }

    /// Passes over `[0-9]+`; `false` if there is no digit.
    private mutating func skipDigits() -> Bool {
        let start = index
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
        return index > start
    }

    /// Reads a string, escapes resolved; refuses control characters,
    /// unknown escapes, unpaired surrogates and invalid UTF-8.
    package mutating func readString() throws(Failure) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw .malformed }
        index += 1
        let start = index
        // The common case: no escapes, so the text is a slice of the body.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                guard let text = String(validating: bytes[start..<index], as: UTF8.self) else { throw .malformed }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw .malformed }
            index += 1
        }
        var unescaped = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: unescaped, as: UTF8.self) else { throw .malformed }
                return text
            case UInt8(ascii: "\\"):
                try readEscape(into: &unescaped)
            case ..<0x20:
                throw .malformed
            default:
                unescaped.append(byte)
            }
        }
        throw .malformed
    }

    private mutating func readEscape(into output: inout [UInt8]) throws(Failure) {
        guard let byte = peek() else { throw .malformed }
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(byte)
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard peek() == UInt8(ascii: "\\") else { throw .malformed }
                index += 1
                guard peek() == UInt8(ascii: "u") else { throw .malformed }
                index += 1
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw .malformed }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else { throw .malformed }
            output.append(contentsOf: encoded)
        default:
            throw .malformed
        }
    }

    private mutating func readHex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw .malformed }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = bytes[index].hexDigitValue else { throw .malformed }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
