import GatewayConsole

extension ConsoleSettings {
    /// `console.*`. The cookie is `Secure` unless the deployment is in
    /// development mode without TLS of its own.
    init(_ settings: SettingsReader, mode: DeploymentMode, servesTLS: Bool) {
        let defaults = ConsoleSettings()
        self.init(
            enabled: settings.boolean("console.enabled", default: defaults.enabled),
            secureCookie: settings.boolean("console.secure_cookie", default: servesTLS || mode == .production),
            idleTimeout: .seconds(60 * settings.integer("console.session_idle_minutes", in: 1...1440, default: 30)),
            lifetime: .seconds(3600 * settings.integer("console.session_hours", in: 1...168, default: 12)))
    }
}
