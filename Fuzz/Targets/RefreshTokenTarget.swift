import Crypto
import Foundation
import GatewayCore

/// A refresh token as a client sends it (`credentials.refresh_token`, the
/// sign-out's `refresh_token`): what reads as a token writes itself back as
/// the same text, and no text a client makes up is taken for any token of a
/// session whose secrets it does not know: its verdict is `unknown`,
/// however its session id and generation are chosen.
enum RefreshTokenTarget {
    static let key = SymmetricKey(size: .bits256)
    static let app = AppID(uuid: UUID(uuidString: "6f1e1c3e-4b0a-4c57-9d2f-2b1f3f9f0a11")!)

    static func run(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard let text = text(bytes), let token = RefreshToken(text: text) else { return }
        try invariant(token.text == text, "\(text.debugDescription) reads as a token whose text differs")
        try invariant(token.secret.count == 32 && token.digest.count == 32, "a secret or digest of another size")
        let successor = token.successor(under: key, in: app)
        try invariant(RefreshToken(text: successor.text) == successor, "a successor that does not read back")
        // A session of the same id and generation whose tokens were never shown.
        let hidden = RefreshToken.first(of: token.sessionID)
        let now = Date()
        let session = StoredSession(
            appID: app, sessionID: token.sessionID, userID: "fuzz", credentialType: "static", methods: [], authTime: now,
            deviceLabel: nil, createdAt: now, lastUsedAt: now, idleExpiresAt: now + 60, expiresAt: now + 60,
            generation: token.generation, tokenDigest: hidden.digest, previousDigest: RefreshToken.first(of: token.sessionID).digest,
            rotatedAt: now, revokedAt: nil, revokedReason: nil)
        let verdict = RefreshVerdict.of(token, session: session, now: now, graceSeconds: 60, key: key)
        try invariant(verdict == .refuse(reason: RefreshVerdict.Reason.unknown), "a made-up token's verdict: \(verdict)")
    }
}
