public import Foundation

/// One session as the gateway keeps it: whose it is, how it began, how long
/// it lives, and what it knows of its refresh tokens (their secrets' digests,
/// never a token).
public struct StoredSession: Sendable, Equatable {
    public var appID: AppID
    public var sessionID: UUID
    public var userID: String
    /// The profile fields the sign-in gave, carried by the session's tokens.
    public var profile: UserProfile
    /// The credential type that began it (`password`, `phone_code`, ...).
    public var credentialType: String
    /// How the user proved who they are at the sign-in (RFC 8176 values).
    public var methods: [String]
    /// The sign-in: OpenID Connect's `auth_time`.
    public var authTime: Date
    /// What the client called its device, if anything.
    public var deviceLabel: String?
    public var createdAt: Date
    public var lastUsedAt: Date
    /// When it ends unless used before (each refresh pushes it back, never past ``expiresAt``).
    public var idleExpiresAt: Date
    /// When it ends whatever happens.
    public var expiresAt: Date
    /// The live refresh token's generation and its secret's digest.
    public var generation: UInt32
    public var tokenDigest: [UInt8]
    /// The token spent last, and when: answered with its successor within the grace window.
    public var previousDigest: [UInt8]?
    public var rotatedAt: Date?
    public var revokedAt: Date?
    public var revokedReason: String?

    public init(
        appID: AppID, sessionID: UUID, userID: String, profile: UserProfile = UserProfile(), credentialType: String,
        methods: [String], authTime: Date, deviceLabel: String?, createdAt: Date, lastUsedAt: Date, idleExpiresAt: Date,
        expiresAt: Date, generation: UInt32, tokenDigest: [UInt8], previousDigest: [UInt8]?, rotatedAt: Date?,
        revokedAt: Date?, revokedReason: String?
    ) {
        self.appID = appID
        self.sessionID = sessionID
        self.userID = userID
        self.profile = profile
        self.credentialType = credentialType
        self.methods = methods
        self.authTime = authTime
        self.deviceLabel = deviceLabel
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.idleExpiresAt = idleExpiresAt
        self.expiresAt = expiresAt
        self.generation = generation
        self.tokenDigest = tokenDigest
        self.previousDigest = previousDigest
        self.rotatedAt = rotatedAt
        self.revokedAt = revokedAt
        self.revokedReason = revokedReason
    }

    /// Whether it can still be refreshed at `now`.
    public func isLive(at now: Date) -> Bool {
        revokedAt == nil && now < expiresAt && now < idleExpiresAt
    }
}
