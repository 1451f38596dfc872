/// How the console runs: `console.*` in the configuration.
public struct ConsoleSettings: Sendable {
    /// Whether `/console` is served at all (`console.enabled`).
    public var enabled: Bool
    /// Whether the session cookie is `Secure` (named `__Host-...`) and the
    /// console's answers carry `Strict-Transport-Security`
    /// (`console.secure_cookie`): on unless the deployment is in development
    /// mode without TLS of its own.
    public var secureCookie: Bool
    /// A session nobody uses for this long ends (`console.session_idle_minutes`).
    public var idleTimeout: Duration
    /// A session ends this long after sign-in however busy it is
    /// (`console.session_hours`).
    public var lifetime: Duration

    public init(
        enabled: Bool = true, secureCookie: Bool = false, idleTimeout: Duration = .seconds(30 * 60),
        lifetime: Duration = .seconds(12 * 3600)
    ) {
        self.enabled = enabled
        self.secureCookie = secureCookie
        self.idleTimeout = idleTimeout
        self.lifetime = lifetime
    }
}
