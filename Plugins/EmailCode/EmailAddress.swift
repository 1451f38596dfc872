import GatewayCore
import GatewayCourier

/// An email address as the email channel keys and sends to it. Read
/// strictly: a local part of dot-atom characters (RFC 5322 §3.2.3, ASCII: no
/// quoted strings, comments or SMTPUTF8), `@`, and a domain of at least two
/// labels. Normalised: the domain lower-cased and IDNA-encoded (each
/// non-ASCII label as `xn--` Punycode, RFC 3492); the local part is sent as
/// written and compared case-insensitively, so ``text`` (the key of its
/// code, and of the user it belongs to) is the whole address lower-cased.
struct EmailAddress: CodeAddress {
    /// The key: local part and domain, lower-cased.
    let text: String
    /// Where a message goes: the local part as written, the domain normalised.
    let mailbox: String

    static let maximumBytes = 254
    static let maximumLocalBytes = 64

    init?(_ written: String) {
        guard let at = written.lastIndex(of: "@") else { return nil }
        let local = written[..<at]
        let domainText = written[written.index(after: at)...]
        guard let domain = Self.domain(domainText), Self.isDotAtom(local), local.utf8.count <= Self.maximumLocalBytes else {
            return nil
        }
        let mailbox = "\(local)@\(domain)"
        guard mailbox.utf8.count <= Self.maximumBytes else { return nil }
        self.mailbox = mailbox
        self.text = mailbox.lowercased()
    }

    /// Reads `field`, or throws the 400 that names it.
    static func parse(_ text: String?, field: String) throws(GatewayError) -> EmailAddress {
        guard let text else { throw .invalidRequest("\(field) is required.") }
        guard let address = EmailAddress(text) else {
            throw .invalidRequest("\(field) must be an email address like ada@example.com (at most 254 bytes).")
        }
        return address
    }

    private static let atomBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-".utf8)

    private static func isDotAtom(_ local: Substring) -> Bool {
        let atoms = local.split(separator: ".", omittingEmptySubsequences: false)
        return !local.isEmpty && atoms.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(atomBytes.contains) }
    }

    /// The domain lower-cased and IDNA-encoded; nil unless every label is
    /// 1 to 63 letters, digits and inner hyphens once encoded, and there are two or more.
    private static func domain(_ text: Substring) -> String? {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, text.utf8.count <= 253 else { return nil }
        var encoded: [String] = []
        for label in labels {
            let lower = label.lowercased()
            let ascii: String
            if lower.utf8.allSatisfy({ $0 < 0x80 }) {
                ascii = lower
            } else {
                guard lower.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "-" }),
                    let punycode = Punycode.encode(lower)
                else { return nil }
                ascii = "xn--" + punycode
            }
            let bytes = Array(ascii.utf8)
            guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-"),
                bytes.allSatisfy({ (97...122).contains($0) || (48...57).contains($0) || $0 == UInt8(ascii: "-") })
            else { return nil }
            encoded.append(ascii)
        }
        return encoded.joined(separator: ".")
    }
}

/// The email channel's codes: `email_codes`, keyed by the address's key (Migrations/0001_email_codes.sql).
enum EmailCodeTable: CodeTable {
    typealias Address = EmailAddress
    static let name = "email_codes"
    static let addressColumn = "email"
}
