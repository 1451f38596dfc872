import Crypto
public import Foundation

/// A user's TOTP secret: 160 random bits (RFC 4226's recommended length),
/// the key of every code their authenticator app shows.
public struct TOTPSecret: Sendable, Equatable {
    public static let byteCount = 20
    public let bytes: [UInt8]

    /// `bytes` as stored (after unsealing); nil unless exactly ``byteCount`` long.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    public static func generate() -> TOTPSecret {
        let key = SymmetricKey(size: SymmetricKeySize(bitCount: byteCount * 8))
        return TOTPSecret(bytes: key.withUnsafeBytes { Array($0) })!
    }

    /// The secret as authenticator apps take it typed in: RFC 4648 base32, unpadded.
    public var base32: String { Base32.encode(bytes) }

    /// The `otpauth://` URI an authenticator app reads from a QR code (the
    /// key URI format every app follows): label `issuer:account`, and the
    /// parameters spelt out although they are the defaults. The label is
    /// only shown: characters some apps' parsers decode twice (pyotp's
    /// among them: `& # ? % + = /`, and `:` in the issuer, which would move
    /// the label's split) become spaces there.
    public func uri(issuer: String, account: String) -> String {
        let issuer = Self.shown(issuer, dropping: "&#?%+=/:")
        let account = Self.shown(account, dropping: "&#?%+=/")
        let label = issuer.isEmpty ? Self.escaped(account) : Self.escaped(issuer) + ":" + Self.escaped(account)
        let issuerParameter = issuer.isEmpty ? "" : "&issuer=\(Self.escaped(issuer))"
        return "otpauth://totp/\(label)?secret=\(base32)\(issuerParameter)&algorithm=SHA1"
            + "&digits=\(TOTP.digits)&period=\(TOTP.period)"
    }

    /// `text` with each of `characters` a space, runs of spaces one, none at either end.
    static func shown(_ text: String, dropping characters: String) -> String {
        let spaced = String(text.map { characters.contains($0) ? " " : $0 })
        return spaced.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    /// Percent-encodes all but RFC 3986's unreserved characters.
    private static func escaped(_ text: String) -> String {
        var unreserved = CharacterSet()
        unreserved.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}

extension TOTPSecret: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never the secret: logs, spans and errors that print one print this.
    public var description: String { "a TOTP secret" }
    public var debugDescription: String { description }
}

/// Time-based one-time passwords as every authenticator app computes them:
/// RFC 6238 over RFC 4226's HOTP, HMAC-SHA-1, six digits, 30-second steps.
public enum TOTP {
    public static let digits = 6
    public static let period: Int64 = 30
    /// Steps either way of the current one whose code is still taken (clock skew, a code typed as it changed).
    public static let allowedSkew: Int64 = 1

    /// The time step `date` falls in.
    public static func step(at date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down)) / period
    }

    /// The code of `step`: six digits, zeros kept.
    public static func code(_ secret: TOTPSecret, step: Int64) -> String {
        let counter = withUnsafeBytes(of: UInt64(bitPattern: step).bigEndian) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: SymmetricKey(data: secret.bytes)))
        // RFC 4226 §5.3: four bytes at the offset the last nibble names, top bit cleared.
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = mac[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7fff_ffff
        let value = String(binary % 1_000_000)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// The step whose code `code` is, among those within ``allowedSkew`` of
    /// `date`'s, and later than `lastAcceptedStep` (a code is taken once,
    /// ever); nil for anything else, a code not six ASCII digits included.
    /// Every candidate is compared, in constant time, whichever matches.
    public static func acceptedStep(
        of code: String, for secret: TOTPSecret, at date: Date, after lastAcceptedStep: Int64?
    ) -> Int64? {
        let typed = Array(code.utf8)
        guard typed.count == digits, typed.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        let now = step(at: date)
        var accepted: Int64?
        for candidate in (now - allowedSkew)...(now + allowedSkew) {
            let matches = Self.equalInConstantTime(Array(Self.code(secret, step: candidate).utf8), typed)
            if matches, candidate > (lastAcceptedStep ?? .min), accepted == nil { accepted = candidate }
        }
        return accepted
    }

    private static func equalInConstantTime(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
