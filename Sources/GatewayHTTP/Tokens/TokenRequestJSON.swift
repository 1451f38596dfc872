import GatewayCore

/// Reads the JSON body of a token request (RFC 8259) in one pass over its
/// bytes: an object whose `app_id`, `user_id` and `nonce` are strings or
/// null and whose `credentials` is an object of strings, or null. Other
/// members may hold any JSON value; they are checked and skipped.
///
/// Written by hand because `JSONDecoder` with `Codable` cost more than the
/// rest of the request's parsing together. Stricter than `JSONDecoder` in
/// one way: a member named twice is refused rather than one copy silently
/// winning, so no two readers of the same body can disagree about it.
struct TokenRequestJSON {
    enum Failure: Error, Equatable {
        /// Not a JSON object, or not JSON at all.
        case malformed
        /// A member at this dotted path holds something other than a string.
        case notAString(path: String)
        /// A member that must hold an object holds something else.
        case notAnObject(path: String)
        /// A member name appears twice in one object.
        case duplicateMember
        /// Arrays and objects nest deeper than ``TokenRequestJSON/maximumDepth``.
        case tooDeep
    }

    /// Nesting allowed inside skipped values; deeper bodies are refused
    /// before they can exhaust the stack.
    static let maximumDepth = 32

    var appID: String?
    var userID: String?
    var nonce: String?
    /// The credentials object's members, `nil` when absent or null.
    var credentials: [String: String]?

    init(_ bytes: [UInt8]) throws(Failure) {
        var reader = Reader(bytes: bytes)
        var appID: String?
        var userID: String?
        var nonce: String?
        var credentials: [String: String]?
        var firstMismatch: Failure?
        try reader.readObject { name, reader throws(Failure) in
            switch name {
            case "app_id", "user_id", "nonce":
                let value: String?
                switch try reader.readOptionalString() {
                case .string(let text): value = text
                case .null: value = nil
                case .other:
                    firstMismatch = firstMismatch ?? .notAString(path: name)
                    return
                }
                switch name {
                case "app_id": appID = value
                case "user_id": userID = value
                default: nonce = value
                }
            case "credentials":
                guard reader.peek() == UInt8(ascii: "{") else {
                    switch try reader.readOptionalString() {
                    case .null: break
                    case .string, .other: firstMismatch = firstMismatch ?? .notAnObject(path: name)
                    }
                    return
                }
                var fields: [String: String] = [:]
                try reader.readObject { field, reader throws(Failure) in
                    if case .string(let text) = try reader.readOptionalString() {
                        fields[field] = text
                    } else {
                        firstMismatch = firstMismatch ?? .notAString(path: "credentials.\(field)")
                    }
                }
                credentials = fields
            default:
                try reader.skipValue(depth: 1)
            }
        }
        reader.skipWhitespace()
        guard reader.atEnd else { throw .malformed }
        if let firstMismatch { throw firstMismatch }
        self.appID = appID
        self.userID = userID
        self.nonce = nonce
        self.credentials = credentials
    }
}

extension TokenRequestJSON {
    /// A value read where a string was wanted.
    enum OptionalString {
        case string(String)
        case null
        /// Any other JSON value (already checked and skipped).
        case other
    }

    struct Reader {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index == bytes.count }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
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
        mutating func readObject(
            _ member: (String, inout Reader) throws(Failure) -> Void
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

        mutating func readOptionalString() throws(Failure) -> OptionalString {
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
        mutating func skipValue(depth: Int) throws(Failure) {
            guard depth <= TokenRequestJSON.maximumDepth else { throw .tooDeep }
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
        mutating func readString() throws(Failure) -> String {
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
}
