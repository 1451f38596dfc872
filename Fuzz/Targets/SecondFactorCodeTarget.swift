import Crypto
import Foundation
import GatewayCore

/// A second factor's code as a user types it (`code` of a `totp`
/// credential, a `recovery_code`): a TOTP code is taken only when it is six
/// ASCII digits equal to the code of a step within the skew, and then for
/// the first such step; a recovery code reads only as ten characters of
/// lowercase base32 once case, dashes and spaces are set aside, and its
/// digest is that text's SHA-256. The same text sent as a sign-in's
/// `mfa_ticket` reads only as `mt1.` and the canonical base64url of 32 bytes,
/// which writes itself back as the same text.
enum SecondFactorCodeTarget {
    static let secret = TOTPSecret(bytes: Array("fuzz-target-secret!!".utf8))!
    static let now = Date(timeIntervalSince1970: 1_800_000_015)

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let typed = text(bytes) else { return }
        let step = TOTP.step(at: now)
        let matching = (step - TOTP.allowedSkew...step + TOTP.allowedSkew).filter { TOTP.code(secret, step: $0) == typed }
        let accepted = TOTP.acceptedStep(of: typed, for: secret, at: now, after: nil)
        try invariant(accepted == matching.first, "\(typed.debugDescription) taken for \(String(describing: accepted))")
        if accepted != nil {
            try invariant(bytes.count == 6 && bytes.allSatisfy { (48...57).contains($0) }, "a code not six ASCII digits")
            try invariant(TOTP.acceptedStep(of: typed, for: secret, at: now, after: accepted) == nil, "a step taken twice")
        }

        let normalized = typed.lowercased().utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: " ") }
        let readable = bytes.count <= 20 && normalized.count == 10
            && normalized.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "2")...UInt8(ascii: "7")).contains($0) }
        let digest = RecoveryCode.digest(of: typed)
        try invariant((digest != nil) == readable, "\(typed.debugDescription) read as a recovery code: \(digest != nil)")
        if let digest { try invariant(digest == Array(SHA256.hash(data: normalized)), "a digest of something else") }

        if let ticket = MFATicket(text: typed) {
            try invariant(ticket.text == typed, "\(typed.debugDescription) reads as a ticket whose text differs")
            try invariant(ticket.secret.count == 32 && typed.hasPrefix("mt1.") && bytes.count == MFATicket.textBytes, "a ticket of another shape")
        }
    }
}
