import Foundation
import GatewayCore
import Logging
import Synchronization

/// Writes each log event as one JSON object on one line of standard error:
/// `time`, `level`, `message`, then the metadata (`request_id`, `app_id`,
/// `route`, `status`, `duration_ms`, ...) as strings.
struct JSONLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level
    private let label: String

    init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var writer = JSONObjectWriter()
        writer.add("time", Date().formatted(Self.timeFormat))
        writer.add("level", event.level.rawValue)
        writer.add("message", "\(event.message)")
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for key in merged.keys.sorted() where !["time", "level", "message"].contains(key) {
            writer.add(key, "\(merged[key]!)")
        }
        if !event.source.isEmpty, merged["source"] == nil { writer.add("source", event.source) }
        var line = writer.finish()
        line.append(UInt8(ascii: "\n"))
        Self.output.withLock { _ in FileHandle.standardError.write(Data(line)) }
    }

    private static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    /// One writer at a time, so lines from different threads never interleave.
    private static let output = Mutex(())
}
