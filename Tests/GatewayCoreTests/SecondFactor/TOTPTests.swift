import Foundation
import GatewayCore
import Testing

/// The gateway's TOTP (issue 60) against RFC 6238's own vectors and its
/// codes' and recovery codes' forms; pyotp and Debian's oathtool judge it in
/// `TOTPVendorTests` (CommandLineIntegrationTests: they are programs).
@Suite struct TOTPTests {
    /// RFC 6238 Appendix B (SHA-1, the 20-byte ASCII secret "1234567890…"):
    /// its eight-digit codes' last six digits are the six-digit codes.
    @Test func rfc6238VectorsGiveTheirLastSixDigits() throws {
        let secret = try #require(TOTPSecret(bytes: Array("12345678901234567890".utf8)))
        let vectors: [(Int64, String)] = [
            (59, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"),
            (2_000_000_000, "279037"), (20_000_000_000, "353130"),
        ]
        for (time, code) in vectors {
            #expect(TOTP.code(secret, step: TOTP.step(at: Date(timeIntervalSince1970: Double(time)))) == code, "T=\(time)")
        }
    }

    /// RFC 4648 §10, unpadded.
    @Test func base32IsRFC4648s() {
        let vectors = ["": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI"]
        for (plain, encoded) in vectors { #expect(Base32.encode(Array(plain.utf8)) == encoded) }
    }

    @Test func onlySixASCIIDigitsCanBeACode() {
        let secret = TOTPSecret.generate()
        let now = Date()
        let code = TOTP.code(secret, step: TOTP.step(at: now))
        #expect(TOTP.acceptedStep(of: code, for: secret, at: now, after: nil) != nil)
        let fullWidth = String(code.unicodeScalars.map { Character(UnicodeScalar($0.value - 0x30 + 0xFF10)!) })
        for typed in ["", String(code.dropLast()), code + "0", " " + code, fullWidth, "١٢٣٤٥٦", "12345a"] {
            #expect(TOTP.acceptedStep(of: typed, for: secret, at: now, after: nil) == nil, "\(typed)")
        }
        #expect(TOTPSecret(bytes: Array(repeating: 1, count: 19)) == nil)
        #expect(TOTPSecret.generate() != TOTPSecret.generate())
    }

    @Test func recoveryCodesAreTenDistinctAndReadAsTyped() throws {
        let codes = RecoveryCode.generate()
        #expect(codes.count == 10 && Set(codes).count == 10)
        for code in codes {
            #expect(code.wholeMatch(of: #/[a-z2-7]{5}-[a-z2-7]{5}/#) != nil, "\(code)")
        }
        let digest = try #require(RecoveryCode.digest(of: codes[0]))
        #expect(RecoveryCode.digest(of: codes[0].uppercased()) == digest)
        #expect(RecoveryCode.digest(of: codes[0].replacingOccurrences(of: "-", with: " ")) == digest)
        #expect(RecoveryCode.digest(of: codes[0].replacingOccurrences(of: "-", with: "")) == digest)
        #expect(RecoveryCode.digest(of: codes[1]) != digest)
        for typed in ["", "abcde-fghi", "abcde-fghij1", "abcde-fgh1j", "abcde-fghi0", String(repeating: "-", count: 100) + codes[0]] {
            #expect(RecoveryCode.digest(of: typed) == nil, "\(typed)")
        }
    }
}
