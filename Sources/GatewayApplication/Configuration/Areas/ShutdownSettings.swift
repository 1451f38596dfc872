/// How the gateway stops on SIGTERM (`shutdown.*`).
struct ShutdownSettings: Sendable {
    /// Seconds `/readyz` answers 503 before the server stops accepting.
    var drainSeconds = 0
    /// Seconds in-flight work may take after a shutdown signal before it is cancelled.
    var graceSeconds = 30

    init(_ settings: SettingsReader) {
        drainSeconds = settings.integer("shutdown.drain_seconds", in: 0...300, default: drainSeconds)
        graceSeconds = settings.integer("shutdown.grace_seconds", in: 1...3600, default: graceSeconds)
    }
}
