import Configuration
import Foundation
import GatewayPluginKit
import Synchronization

/// The settings file and the environment, read by key: `http.port` in the
/// file, or the variable the key names, `GATEWAY_HTTP_PORT` (the name is
/// derived here and nowhere else). The gateway's own areas and the plugins
/// (as their ``PluginSettings``) read through it alike. A bad value is noted
/// with its key and variable, the default is answered meanwhile, and
/// ``problems`` lists every note once reading is done.
final class SettingsReader: PluginSettings {
    let reader: ConfigReader
    /// The process environment, for the few standard variables read beside
    /// the gateway's own (`OTEL_*`).
    let environment: [String: String]
    private let noted = Mutex<[String]>([])

    init(reader: ConfigReader, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.reader = reader
        self.environment = environment
    }

    var problems: [String] { noted.withLock { $0 } }

    /// `sms.allow_private_addresses` → `GATEWAY_SMS_ALLOW_PRIVATE_ADDRESSES`.
    static func environmentName(_ key: String) -> String {
        "GATEWAY_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// `http.port (GATEWAY_HTTP_PORT)`: how a problem names a key.
    static func label(_ key: String) -> String { "\(key) (\(environmentName(key)))" }

    /// Notes a problem with `key`'s value.
    func note(_ key: String, _ problem: String) { noteLine("\(Self.label(key)): \(problem)") }

    /// Notes a problem that is not one key's (two keys that go together).
    func noteLine(_ line: String) { noted.withLock { $0.append(line) } }

    func string(_ key: String) -> String? { reader.string(forKey: ConfigKey(key)) }

    func isSet(_ key: String) -> Bool { string(key) != nil }

    /// A secret given inline (`key`) or as a file to read (`key_file`, e.g. a
    /// mounted Kubernetes secret; one trailing newline is dropped).
    func secret(_ key: String) -> String? {
        if let value = reader.string(forKey: ConfigKey(key), isSecret: true) { return value }
        guard let path = string(key + "_file") else { return nil }
        guard var text = try? String(contentsOfFile: path, encoding: .utf8) else {
            note(key + "_file", "cannot read \(path)")
            return nil
        }
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    func boolean(_ key: String, default value: Bool) -> Bool {
        switch string(key)?.lowercased() {
        case nil: return value
        case "false", "0", "no": return false
        case "true", "1", "yes": return true
        case let other?:
            note(key, "'\(other)' is not true or false")
            return value
        }
    }

    func integer(_ key: String, in range: ClosedRange<Int>, default value: Int) -> Int {
        guard let text = string(key) else { return value }
        guard let number = Int(text), range.contains(number) else {
            note(key, "'\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            return value
        }
        return number
    }

    /// One of `Choice`'s raw values, given in any case.
    func choice<Choice: RawRepresentable<String>>(_ key: String, default value: Choice, oneOf names: String) -> Choice {
        guard let text = string(key) else { return value }
        guard let parsed = Choice(rawValue: text.lowercased()) else {
            note(key, "'\(text)' is not \(names)")
            return value
        }
        return parsed
    }

    func filePath(_ key: String) -> String? {
        guard let path = string(key), !path.isEmpty else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else {
            note(key, "cannot read \(path)")
            return nil
        }
        return path
    }

    func httpURL(_ key: String) -> URL? {
        guard let text = string(key), !text.isEmpty else { return nil }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host() != nil,
            url.query == nil, url.fragment == nil, url.user == nil, url.password == nil
        else {
            note(key, "'\(text)' is not an http(s) URL without query, fragment or user")
            return nil
        }
        return url
    }
}
