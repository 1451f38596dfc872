public import Logging

/// How log lines are written.
public enum LogFormat: String, Sendable {
    /// One JSON object a line, for log collectors.
    case json
    /// Plain text, for people at a terminal.
    case text
}

/// Sends log lines to standard error at `level`, as JSON unless `format` says text.
public func bootstrapLogging(level: Logger.Level, format: LogFormat = .json) -> Logger {
    LoggingSystem.bootstrap { label in
        switch format {
        case .json:
            return JSONLogHandler(label: label, level: level)
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
    return Logger(label: "identity-gateway")
}
