public import Foundation

/// A change to a session made in the same statement as its request's audit
/// row and counters (``RequestLedger/countAndRecord(_:ifAllowed:changing:)``):
/// no token answers with a session that was not written, and a refresh costs
/// no commit of its own.
public enum SessionChange: Sendable, Equatable {
    /// A new session, written only with the token request's `token.issued`
    /// row; the user's oldest live sessions past the app's maximum end.
    case start(SessionStart)
    /// A refresh token spent for its successor, only if it is still the live
    /// one; the row is written only if it was (``Admission/admitted``).
    case rotate(SessionRotation)
    /// The session ends, written whatever the counters say (a reuse detected).
    case revoke(appID: AppID, sessionID: UUID, reason: String)
}

/// What a new session is written with.
public struct SessionStart: Sendable, Equatable {
    public let appID: AppID
    public let sessionID: UUID
    public let userID: String
    public let profile: UserProfile
    public let credentialType: String
    public let methods: [String]
    public let deviceLabel: String?
    /// The first token's secret's digest.
    public let tokenDigest: [UInt8]
    public let idleTimeoutSeconds: Int
    public let lifetimeSeconds: Int
    /// Live sessions the user may hold, this one included.
    public let maximumPerUser: Int

    public init(
        appID: AppID, sessionID: UUID, userID: String, profile: UserProfile, credentialType: String, methods: [String],
        deviceLabel: String?, tokenDigest: [UInt8], idleTimeoutSeconds: Int, lifetimeSeconds: Int, maximumPerUser: Int
    ) {
        self.appID = appID
        self.sessionID = sessionID
        self.userID = userID
        self.profile = profile
        self.credentialType = credentialType
        self.methods = methods
        self.deviceLabel = deviceLabel
        self.tokenDigest = tokenDigest
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.lifetimeSeconds = lifetimeSeconds
        self.maximumPerUser = maximumPerUser
    }
}

/// A refresh token spent for its successor.
public struct SessionRotation: Sendable, Equatable {
    public let appID: AppID
    public let sessionID: UUID
    /// The spent token's generation and digest: the rotation happens only while they are the live ones.
    public let generation: UInt32
    public let tokenDigest: [UInt8]
    public let successorDigest: [UInt8]
    public let idleTimeoutSeconds: Int

    public init(
        appID: AppID, sessionID: UUID, generation: UInt32, tokenDigest: [UInt8], successorDigest: [UInt8],
        idleTimeoutSeconds: Int
    ) {
        self.appID = appID
        self.sessionID = sessionID
        self.generation = generation
        self.tokenDigest = tokenDigest
        self.successorDigest = successorDigest
        self.idleTimeoutSeconds = idleTimeoutSeconds
    }
}
