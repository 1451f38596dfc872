import Crypto
import Foundation
import GatewayCore
import Testing

/// The refresh token's text and its family's rules, without I/O.
@Suite struct RefreshTokenTests {
    static let key = SymmetricKey(size: .bits256)
    static let app = AppID(uuid: UUID())

    @Test func aTokenReadsBackFromItsTextAndNothingElseReadsAsOne() throws {
        let token = RefreshToken.first(of: UUID())
        #expect(token.text.utf8.count == RefreshToken.textBytes)
        #expect(RefreshToken(text: token.text) == token)
        #expect(token.secret.count == 32)
        let successor = token.successor(under: Self.key, in: Self.app)
        #expect(RefreshToken(text: successor.text) == successor)
        #expect(successor.generation == 1 && successor.sessionID == token.sessionID)
        var text = token.text
        let body = String(text.dropFirst(4))
        let (head, tail) = (String(text.prefix(40)), String(text.dropFirst(41)))
        let bad: [String] = ["", "rt1.", String(text.dropLast()), text + "A", "rt2." + body, "RT1." + body, head + "+" + tail, head + "=" + tail]
        for bad in bad {
            #expect(RefreshToken(text: bad) == nil, "\(bad)")
        }
        // A non-canonical last character (the same bytes written another way) is no token.
        let last = text.removeLast()
        for other in "AEIMQUYcgkosw048" where other != last {
            if let read = RefreshToken(text: text + String(other)) { #expect(read.text == text + String(other)) }
        }
    }

    @Test func successorsAreDeterministicUnderOneKeyAndUnguessableWithoutIt() {
        let token = RefreshToken.first(of: UUID())
        #expect(token.successor(under: Self.key, in: Self.app) == token.successor(under: Self.key, in: Self.app))
        #expect(token.successor(under: Self.key, in: Self.app) != token.successor(under: SymmetricKey(size: .bits256), in: Self.app))
        #expect(token.successor(under: Self.key, in: Self.app) != token.successor(under: Self.key, in: AppID(uuid: UUID())))
        #expect(RefreshToken.first(of: token.sessionID) != token)
    }

    @Test func itsDescriptionNeverHoldsTheToken() {
        let token = RefreshToken.first(of: UUID())
        #expect(!"\(token)".contains(token.text) && !String(reflecting: token).contains(Base64URL.encode(token.secret)))
    }

    /// A session whose live token is `live`, spent `spentSecondsAgo` from `previous`.
    static func session(live: RefreshToken, previous: RefreshToken?, rotatedAt: Date?, now: Date) -> StoredSession {
        StoredSession(
            appID: app, sessionID: live.sessionID, userID: "ada", credentialType: "password", methods: ["pwd"],
            authTime: now - 3600, deviceLabel: nil, createdAt: now - 3600, lastUsedAt: now - 60,
            idleExpiresAt: now + 3600, expiresAt: now + 86_400, generation: live.generation, tokenDigest: live.digest,
            previousDigest: previous?.digest, rotatedAt: rotatedAt, revokedAt: nil, revokedReason: nil)
    }

    @Test func theVerdictsOfAFamily() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let first = RefreshToken.first(of: UUID())
        let second = first.successor(under: Self.key, in: Self.app)
        let third = second.successor(under: Self.key, in: Self.app)
        let session = Self.session(live: third, previous: second, rotatedAt: now - 5, now: now)
        func verdict(_ token: RefreshToken, _ session: StoredSession?, at time: Date = now) -> RefreshVerdict {
            RefreshVerdict.of(token, session: session, now: time, graceSeconds: 10, key: Self.key)
        }
        #expect(verdict(third, session) == .rotate(successor: third.successor(under: Self.key, in: Self.app)))
        #expect(verdict(second, session) == .retry(successor: third))
        #expect(verdict(second, session, at: now + 6) == .reuse)
        #expect(verdict(first, session) == .reuse)
        // A made-up secret under the session's id, a later generation, another session: unknown, nothing ends.
        let madeUp = RefreshToken(sessionID: first.sessionID, generation: 1, secret: RefreshToken.first(of: UUID()).secret)
        #expect(verdict(madeUp, session) == .refuse(reason: RefreshVerdict.Reason.unknown))
        #expect(verdict(third.successor(under: Self.key, in: Self.app), session) == .refuse(reason: RefreshVerdict.Reason.unknown))
        #expect(verdict(third, nil) == .refuse(reason: RefreshVerdict.Reason.unknown))
        // Ended sessions say how they ended, to the family's tokens only.
        var revoked = session
        revoked.revokedAt = now - 1
        #expect(verdict(third, revoked) == .refuse(reason: RefreshVerdict.Reason.revoked))
        #expect(verdict(first, revoked) == .refuse(reason: RefreshVerdict.Reason.revoked))
        #expect(verdict(madeUp, revoked) == .refuse(reason: RefreshVerdict.Reason.unknown))
        #expect(verdict(third, session, at: session.idleExpiresAt) == .refuse(reason: RefreshVerdict.Reason.idle))
        var longIdle = session
        longIdle.idleExpiresAt = session.expiresAt + 10
        #expect(verdict(third, longIdle, at: session.expiresAt) == .refuse(reason: RefreshVerdict.Reason.expired))
    }

    /// Issue 76.4: the walk from a spent token to the live one is bounded.
    /// A session refreshed 3 000 times: its token 16 generations back is
    /// still this family's (reuse), one 17 back is unknown and ends nothing,
    /// and a forged token at generation 0 is refused without a walk, whatever
    /// the live generation (a walk of 3 000 HMACs was the amplifier).
    @Test func theWalkBackThroughAFamilyIsBounded() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var chain = [RefreshToken.first(of: UUID())]
        for _ in 0..<3_000 { chain.append(chain[chain.count - 1].successor(under: Self.key, in: Self.app)) }
        let live = chain[3_000]
        let session = Self.session(live: live, previous: chain[2_999], rotatedAt: now - 60, now: now)
        func verdict(_ token: RefreshToken) -> RefreshVerdict {
            RefreshVerdict.of(token, session: session, now: now, graceSeconds: 10, key: Self.key)
        }
        #expect(RefreshVerdict.longestWalk == 16)
        #expect(verdict(chain[3_000 - 16]) == .reuse)
        #expect(verdict(chain[3_000 - 17]) == .refuse(reason: RefreshVerdict.Reason.unknown))
        #expect(verdict(chain[0]) == .refuse(reason: RefreshVerdict.Reason.unknown))
        let forged = RefreshToken(sessionID: live.sessionID, generation: 0, secret: RefreshToken.first(of: UUID()).secret)
        #expect(verdict(forged) == .refuse(reason: RefreshVerdict.Reason.unknown))

        // Which tokens need the walk, which callers make only once the request's limits allowed it: neither
        // the live one nor the last spent one, and none past the bound (a forged generation 0 included).
        #expect(!RefreshVerdict.needsWalk(live, session: session) && !RefreshVerdict.needsWalk(chain[2_999], session: session))
        #expect(RefreshVerdict.needsWalk(chain[3_000 - 16], session: session))
        #expect(RefreshVerdict.needsWalk(chain[2_998], session: session))
        #expect(!RefreshVerdict.needsWalk(chain[3_000 - 17], session: session) && !RefreshVerdict.needsWalk(forged, session: session))
        let withinBound = RefreshToken(sessionID: live.sessionID, generation: 2_990, secret: forged.secret)
        #expect(RefreshVerdict.needsWalk(withinBound, session: session), "a forged token within the bound needs it too")
        // Without the walk, such a token is refused as unknown; with it, an older token of the family is reuse.
        let unwalked = RefreshVerdict.of(chain[2_998], session: session, now: now, graceSeconds: 10, key: Self.key, walking: false)
        #expect(unwalked == .refuse(reason: RefreshVerdict.Reason.unknown))
        #expect(verdict(chain[2_998]) == .reuse)
        #expect(RefreshVerdict.of(live, session: session, now: now, graceSeconds: 10, key: Self.key, walking: false)
            == .rotate(successor: live.successor(under: Self.key, in: Self.app)), "the live token needs no walk")
    }
}
