/// An app's `sessions` settings: whether a successful token request starts a
/// session whose refresh token answers later challenges without the user's
/// secret, and how long such a session lives. Off unless set, so an app's
/// answers stay as they were.
public struct SessionSettings: Sendable, Equatable, Codable {
    /// A session unused this long ends (each refresh pushes it back).
    public var idleTimeoutSeconds: Int
    /// A session ends this long after its sign-in, however often it is used.
    public var absoluteLifetimeSeconds: Int
    /// How long after a refresh token is spent the same token is answered
    /// with the same successor (an answer lost on the network, a retry, two
    /// requests at once), instead of being taken for a stolen token's reuse.
    public var reuseGraceSeconds: Int
    /// Live sessions one user may hold; a new one past it ends the oldest.
    public var maximumPerUser: Int
    /// Whether changing a user's password through the admin API ends their
    /// sessions (disabling or deleting a user always does).
    public var revokeOnPasswordChange: Bool

    public static let idleTimeoutRange = 60...31_536_000
    public static let absoluteLifetimeRange = 60...31_536_000
    public static let reuseGraceRange = 0...300
    public static let maximumPerUserRange = 1...100

    public init(
        idleTimeoutSeconds: Int = 14 * 86_400, absoluteLifetimeSeconds: Int = 90 * 86_400, reuseGraceSeconds: Int = 10,
        maximumPerUser: Int = 10, revokeOnPasswordChange: Bool = true
    ) {
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.absoluteLifetimeSeconds = absoluteLifetimeSeconds
        self.reuseGraceSeconds = reuseGraceSeconds
        self.maximumPerUser = maximumPerUser
        self.revokeOnPasswordChange = revokeOnPasswordChange
    }

    /// The first setting in which these let sessions live longer or be
    /// held more loosely than `stored` (a longer idle timeout or lifetime,
    /// a longer grace, more sessions a user, sessions kept through a new
    /// password), by its name in the API; nil when they loosen nothing.
    public func loosening(of stored: SessionSettings) -> String? {
        if idleTimeoutSeconds > stored.idleTimeoutSeconds { return CodingKeys.idleTimeoutSeconds.rawValue }
        if absoluteLifetimeSeconds > stored.absoluteLifetimeSeconds { return CodingKeys.absoluteLifetimeSeconds.rawValue }
        if reuseGraceSeconds > stored.reuseGraceSeconds { return CodingKeys.reuseGraceSeconds.rawValue }
        if maximumPerUser > stored.maximumPerUser { return CodingKeys.maximumPerUser.rawValue }
        if stored.revokeOnPasswordChange && !revokeOnPasswordChange { return CodingKeys.revokeOnPasswordChange.rawValue }
        return nil
    }

    enum CodingKeys: String, CodingKey {
        case idleTimeoutSeconds = "idle_timeout_seconds"
        case absoluteLifetimeSeconds = "absolute_lifetime_seconds"
        case reuseGraceSeconds = "reuse_grace_seconds"
        case maximumPerUser = "max_sessions_per_user"
        case revokeOnPasswordChange = "revoke_on_password_change"
    }
}
