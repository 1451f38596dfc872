/// One reply of an SMTP server (RFC 5321 §4.2): a three-digit code and its
/// lines of text (`250-PIPELINING`, `250 SIZE 10240000`: one reply, two lines).
public struct SMTPReply: Sendable, Equatable, CustomStringConvertible {
    public let code: Int
    public let lines: [String]

    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    public var isPositive: Bool { (200..<400).contains(code) }
    /// 4xx: the server may take it later.
    public var isTransient: Bool { (400..<500).contains(code) }

    /// The code and the first line, as the audit trail keeps it.
    public var description: String { "\(code) \(lines.first ?? "")" }
}

/// Reads replies out of the server's bytes, strictly: lines end in CRLF,
/// every line of one reply has the same code, a line is at most
/// ``maximumLineBytes`` and a reply at most ``maximumLines`` lines.
/// Anything else is a protocol failure, never guessed at.
struct SMTPReplyReader {
    static let maximumLineBytes = 2048
    static let maximumLines = 64

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    private var pending: [UInt8] = []
    private var lines: [String] = []
    private var code: Int?

    /// Whether bytes or lines of an unfinished reply are held: after the
    /// 220 to STARTTLS there must be none (RFC 3207 §5: anything sent before
    /// the handshake is an attacker's).
    var holdsAnything: Bool { !pending.isEmpty || !lines.isEmpty }

    /// Adds bytes; returns the replies they complete.
    mutating func read(_ bytes: some Sequence<UInt8>) throws(Malformed) -> [SMTPReply] {
        var replies: [SMTPReply] = []
        for byte in bytes {
            pending.append(byte)
            if byte == UInt8(ascii: "\n") {
                guard pending.count >= 2, pending[pending.count - 2] == UInt8(ascii: "\r") else {
                    throw Malformed(description: "a reply line ended without CRLF")
                }
                let line = Array(pending.dropLast(2))
                pending.removeAll(keepingCapacity: true)
                if let reply = try take(line) { replies.append(reply) }
            } else if pending.count > Self.maximumLineBytes {
                throw Malformed(description: "a reply line longer than \(Self.maximumLineBytes) bytes")
            }
        }
        return replies
    }

    private mutating func take(_ line: [UInt8]) throws(Malformed) -> SMTPReply? {
        let digits = line.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let lineCode = Int(String(decoding: digits, as: UTF8.self)), (200...599).contains(lineCode)
        else { throw Malformed(description: "a reply line without a reply code") }
        let separator = line.count > 3 ? line[3] : UInt8(ascii: " ")
        guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
            throw Malformed(description: "a reply code followed by neither a space nor a hyphen")
        }
        if let code, code != lineCode { throw Malformed(description: "one reply with two codes") }
        guard line.allSatisfy({ $0 == 9 || (32..<127).contains($0) }) else {
            throw Malformed(description: "a control or non-ASCII byte in a reply")
        }
        code = lineCode
        lines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
        guard lines.count <= Self.maximumLines else { throw Malformed(description: "a reply of more than \(Self.maximumLines) lines") }
        guard separator == UInt8(ascii: " ") else { return nil }
        defer {
            lines.removeAll()
            code = nil
        }
        return SMTPReply(code: lineCode, lines: lines)
    }
}
