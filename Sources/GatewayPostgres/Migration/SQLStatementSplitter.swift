import Foundation

/// Splits a migration file into single statements, because PostgresNIO speaks
/// only the extended query protocol (one statement per query). Semicolons
/// inside quotes, quoted identifiers, dollar-quoted bodies and comments do not
/// split.
enum SQLStatementSplitter {
    static func split(_ sql: String) -> [String] {
        let bytes = Array(sql.utf8)
        var statements: [String] = []
        var start = 0
        var index = 0
        var hasContent = false

        func flush(upTo end: Int) {
            if hasContent {
                let text = String(decoding: bytes[start..<end], as: UTF8.self)
                statements.append(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            hasContent = false
        }

        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "-") where next(bytes, index) == UInt8(ascii: "-"):
                index = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
                continue
            case UInt8(ascii: "/") where next(bytes, index) == UInt8(ascii: "*"):
                index = endOfBlockComment(bytes, from: index)
                continue
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                hasContent = true
                index = endOfQuoted(bytes, from: index, quote: byte)
                continue
            case UInt8(ascii: "$"):
                hasContent = true
                if let tagEnd = dollarTagEnd(bytes, from: index) {
                    let tag = Array(bytes[index...tagEnd])
                    index = endOfDollarQuoted(bytes, after: tagEnd + 1, tag: tag)
                    continue
                }
            case UInt8(ascii: ";"):
                flush(upTo: index)
                start = index + 1
            case 0x20, 0x09, 0x0A, 0x0D:
                break
            default:
                hasContent = true
            }
            index += 1
        }
        flush(upTo: bytes.count)
        return statements
    }

    private static func next(_ bytes: [UInt8], _ index: Int) -> UInt8? {
        index + 1 < bytes.count ? bytes[index + 1] : nil
    }

    private static func endOfBlockComment(_ bytes: [UInt8], from index: Int) -> Int {
        var position = index + 2
        var depth = 1
        while position < bytes.count, depth > 0 {
            if bytes[position] == UInt8(ascii: "*"), next(bytes, position) == UInt8(ascii: "/") {
                depth -= 1
                position += 2
            } else if bytes[position] == UInt8(ascii: "/"), next(bytes, position) == UInt8(ascii: "*") {
                depth += 1
                position += 2
            } else {
                position += 1
            }
        }
        return position
    }

    /// Past the closing quote; a doubled quote is an escaped one.
    private static func endOfQuoted(_ bytes: [UInt8], from index: Int, quote: UInt8) -> Int {
        var position = index + 1
        while position < bytes.count {
            if bytes[position] == quote {
                if next(bytes, position) == quote {
                    position += 2
                    continue
                }
                return position + 1
            }
            position += 1
        }
        return position
    }

    /// The index of the closing `$` of a dollar-quote tag (`$$` or `$name$`) starting at `index`.
    private static func dollarTagEnd(_ bytes: [UInt8], from index: Int) -> Int? {
        var position = index + 1
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "$") { return position }
            let isTagByte = byte == UInt8(ascii: "_") || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || (position > index + 1 && byte >= 0x30 && byte <= 0x39)
            guard isTagByte else { return nil }
            position += 1
        }
        return nil
    }

    private static func endOfDollarQuoted(_ bytes: [UInt8], after index: Int, tag: [UInt8]) -> Int {
        var position = index
        while position + tag.count <= bytes.count {
            if bytes[position] == UInt8(ascii: "$"), Array(bytes[position..<(position + tag.count)]) == tag {
                return position + tag.count
            }
            position += 1
        }
        return bytes.count
    }
}
