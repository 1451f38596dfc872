import Foundation

/// Text that goes into a message header: nothing a user or an app admin
/// types may end a header or start another, so CR, LF, NUL and every other
/// control character are refused where options are read (``isPlain(_:)``)
/// and turned into spaces where a value is rendered (``flattened(_:)``),
/// and text that is not plain ASCII travels as RFC 2047 encoded words.
enum HeaderText {
    /// Whether `text` has no control characters (C0, DEL, C1, and the line and paragraph separators).
    static func isPlain(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { !isControl($0) }
    }

    /// `text` with each control character replaced by a space.
    static func flattened(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }

    /// An unstructured header's value (`Subject`): as it is when it is
    /// printable ASCII, else as `=?UTF-8?B?...?=` words of at most 75
    /// characters (RFC 2047 §2), folded onto lines of their own.
    static func unstructured(_ text: String) -> String {
        let flat = flattened(text)
        if flat.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }), flat.utf8.count <= 900 { return flat }
        return encodedWords(flat).joined(separator: "\r\n ")
    }

    /// A display name in an address header (`From`): a quoted string when
    /// it is printable ASCII, else encoded words.
    static func displayName(_ text: String) -> String {
        let flat = flattened(text)
        if flat.utf8.allSatisfy({ (0x20..<0x7F).contains($0) }) {
            return "\"" + flat.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return encodedWords(flat).joined(separator: "\r\n ")
    }

    /// Base64 encoded words, each whole characters of at most 45 bytes (60 base64 characters, 72 with the markers).
    static func encodedWords(_ text: String) -> [String] {
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk.removeAll()
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words
    }
}
