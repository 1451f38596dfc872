import Crypto
public import Foundation
public import GatewayCore

/// What the token path needs of sessions: where they are read, and the key
/// successors are derived under (``RefreshToken/successor(under:in:)``),
/// itself derived from the master key, so every replica derives the same.
public struct RefreshTokens: Sendable {
    /// The master key's purpose for the successor key.
    public static let keyPurpose = "refresh-token-successor"

    let store: any SessionStore
    let successorKey: SymmetricKey
    /// The sessions this replica rotated last: a refresh of their live token needs no reading first.
    let recent: RecentRotations

    public init(store: any SessionStore, masterKey: MasterKey, recentCapacity: Int = 20_000) {
        self.store = store
        self.successorKey = SymmetricKey(data: masterKey.derivedSecret(for: Self.keyPurpose))
        self.recent = RecentRotations(capacity: recentCapacity)
    }

    /// A new session for `identity`'s sign-in: what the row's statement
    /// writes, and what its client is answered.
    func start(
        for identity: VerifiedIdentity, in app: AppSettings, credentialType: String, methods: [String], deviceLabel: String?,
        settings: SessionSettings
    ) -> (change: SessionStart, issued: IssuedSession) {
        let token = RefreshToken.first(of: UUID())
        let change = SessionStart(
            appID: app.appID, sessionID: token.sessionID, userID: identity.userID, profile: identity.profile,
            credentialType: credentialType, methods: methods, deviceLabel: deviceLabel, tokenDigest: token.digest,
            idleTimeoutSeconds: settings.idleTimeoutSeconds, lifetimeSeconds: settings.absoluteLifetimeSeconds,
            maximumPerUser: settings.maximumPerUser)
        let expiresIn = min(settings.idleTimeoutSeconds, settings.absoluteLifetimeSeconds)
        return (change, IssuedSession(refreshToken: token, expiresInSeconds: expiresIn))
    }

    /// The `rotate` verdict on the refresh token `text` of `app` when this
    /// replica rotated its session last and `text` is the live token it
    /// left; nil otherwise (then ``verdict(on:in:settings:)`` reads). The
    /// rotation's statement is what decides (``RecentRotations``).
    func rememberedVerdict(on text: String?, in app: AppSettings, settings: SessionSettings) -> RefreshReading? {
        guard let text, let token = RefreshToken(text: text),
            let session = recent.session(whoseLiveTokenIs: token, in: app.appID)
        else { return nil }
        let now = Date()
        let verdict = RefreshVerdict.of(
            token, session: session, now: now, graceSeconds: settings.reuseGraceSeconds, key: successorKey)
        guard case .rotate = verdict else { return nil }
        return RefreshReading(token: token, session: session, now: now, verdict: verdict)
    }

    /// The verdict on the refresh token `text` of `app`, read against its
    /// session now. Without `walking`, a token only a walk could tell from a
    /// forged one is refused as unknown, its reading saying so
    /// (``RefreshReading/needsWalk``): the caller counts the refusal, then
    /// asks ``walked(_:settings:)``.
    func verdict(
        on text: String?, in app: AppSettings, settings: SessionSettings, walking: Bool = true
    ) async throws -> RefreshReading {
        guard let text, let token = RefreshToken(text: text) else {
            return RefreshReading(token: nil, session: nil, now: Date(), verdict: .refuse(reason: RefreshVerdict.Reason.malformed))
        }
        let lookup = try await store.find(token.sessionID, in: app.appID)
        let verdict = RefreshVerdict.of(
            token, session: lookup.session, now: lookup.now, graceSeconds: settings.reuseGraceSeconds, key: successorKey,
            walking: walking)
        return RefreshReading(
            token: token, session: lookup.session, now: lookup.now, verdict: verdict,
            needsWalk: !walking && RefreshVerdict.needsWalk(token, session: lookup.session))
    }

    /// The reading with its walk made: the verdict on an older token of the family (reuse) or a forged one.
    func walked(_ reading: RefreshReading, settings: SessionSettings) -> RefreshReading {
        guard reading.needsWalk, let token = reading.token else { return reading }
        let verdict = RefreshVerdict.of(
            token, session: reading.session, now: reading.now, graceSeconds: settings.reuseGraceSeconds, key: successorKey)
        return RefreshReading(token: token, session: reading.session, now: reading.now, verdict: verdict)
    }
}

/// A refresh token read against its session.
struct RefreshReading {
    let token: RefreshToken?
    let session: StoredSession?
    /// The storage's clock at the reading.
    let now: Date
    let verdict: RefreshVerdict
    /// The verdict was made without the walk that tells an older token of
    /// the family from a forged one (``RefreshTokens/walked(_:settings:)``).
    var needsWalk = false
}

/// What a client keeps of its session, answered with a token: shown once.
public struct IssuedSession: Sendable, CustomStringConvertible {
    public let refreshToken: RefreshToken
    /// Seconds until the refresh token stops working unless used: the idle
    /// timeout, or what is left of the session's lifetime if that is less.
    public let expiresInSeconds: Int

    public var sessionID: UUID { refreshToken.sessionID }

    /// Never the token.
    public var description: String { "session \(sessionID.lowercasedText)" }
}
