public import Logging

/// What the gateway logs and how (`log.*`).
public struct LogSettings: Sendable {
    public internal(set) var level = Logger.Level.info
    public internal(set) var format = LogFormat.json
    /// One access-log line a request.
    public internal(set) var requests = true

    init(_ settings: SettingsReader) {
        requests = settings.boolean("log.requests", default: requests)
        format = settings.choice("log.format", default: format, oneOf: "json or text")
        level = settings.choice(
            "log.level", default: level, oneOf: "one of trace, debug, info, notice, warning, error, critical")
    }
}
