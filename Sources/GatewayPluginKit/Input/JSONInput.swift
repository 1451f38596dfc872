public import Foundation
public import GatewayCore
public import Hummingbird
import NIOCore

/// A JSON object read strictly: unknown members and wrongly typed values are
/// 400s that name the member. A request body has no path; a plugin's options
/// have one (`plugins.password`), and every message names the member under it.
public struct JSONInput: Sendable {
    public static let maximumBodyBytes = 256 * 1024

    public let members: [String: JSONValue]
    /// Where these members sit, for messages; `nil` for a request body.
    public let path: String?

    public init(members: [String: JSONValue], path: String? = nil) {
        self.members = members
        self.path = path
    }

    /// Reads `value` as an object at `path`; `null` is an empty object.
    public init(_ value: JSONValue, path: String) throws(GatewayError) {
        switch value {
        case .null: self.init(members: [:], path: path)
        case .object(let object): self.init(members: object, path: path)
        default: throw .invalidRequest("\(path) must be an object.")
        }
    }

    /// Reads the request body as one JSON object of at most `maximumBytes` (413 beyond).
    public static func read(_ request: Request, maximumBytes: Int = maximumBodyBytes) async throws -> JSONInput {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw GatewayError(.unsupportedMediaType, .unsupportedMediaType, "Send the request as application/json.")
        }
        let body = try await request.readBody(upTo: maximumBytes)
        return try parse(Array(body.readableBytesView))
    }

    /// Reads `bytes` strictly (``StrictJSONReader``: no member named twice,
    /// 32 levels at most) as one JSON object; `subject` names it in messages.
    /// A string holding U+0000 is refused wherever it is, since PostgreSQL
    /// stores no NUL in text or `jsonb`.
    public static func parse(_ bytes: [UInt8], subject: String = "body") throws(GatewayError) -> JSONInput {
        let members: [String: JSONValue]
        do {
            members = try StrictJSONReader.object(bytes)
        } catch {
            throw error.gatewayError(subject: subject)
        }
        if let path = pathHoldingNUL(.object(members), at: nil) {
            throw .invalidRequest("\(path) must not contain the NUL character (\\u0000).")
        }
        return JSONInput(members: members)
    }

    /// Where the first string or member name holding U+0000 is, or `nil`.
    private static func pathHoldingNUL(_ value: JSONValue, at path: String?) -> String? {
        switch value {
        case .string(let text):
            return text.utf8.contains(0) ? path : nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = pathHoldingNUL(element, at: "\(path ?? "")[\(index)]") { return found }
            }
        case .object(let members):
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                if name.utf8.contains(0) { return path.map { "A member name in \($0)" } ?? "A member name" }
                if let found = pathHoldingNUL(member, at: path.map { "\($0).\(name)" } ?? name) { return found }
            }
        case .null, .bool, .number:
            break
        }
        return nil
    }

    /// `key` as messages name it.
    private func name(_ key: String) -> String {
        path.map { "\($0).\(key)" } ?? key
    }

    public func rejectUnknown(allowed: Set<String>) throws(GatewayError) {
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .invalidRequest(path == nil ? "\(unknown) is not a field of this request." : "\(name(unknown)) is not a known option.")
        }
    }

    public func has(_ key: String) -> Bool { members[key] != nil }

    public func string(_ key: String) throws(GatewayError) -> String? {
        switch members[key] {
        case nil, .null: return nil
        case .string(let value): return value
        default: throw .invalidRequest("\(name(key)) must be a string.")
        }
    }

    /// A write-only secret of `bytes` length: the admin API shows it as
    /// ``RedactedSecret/marker``, which is refused here, so a change must
    /// send the secret itself again.
    public func secret(_ key: String, bytes: ClosedRange<Int>) throws(GatewayError) -> String {
        guard let value = try string(key), value != RedactedSecret.marker, bytes.contains(value.utf8.count) else {
            throw .invalidRequest(
                "\(name(key)) must be the secret itself (\(bytes.lowerBound) to \(bytes.upperBound) bytes); the admin API never shows it, so send it again when changing these settings.")
        }
        return value
    }

    /// A required string of `bytes` length whose every character is in `allowed`; `what` describes the form.
    public func token(_ key: String, bytes: ClosedRange<Int>, allowed: (UInt8) -> Bool, what: String) throws(GatewayError) -> String {
        guard let value = try string(key), bytes.contains(value.utf8.count), value.utf8.allSatisfy(allowed) else {
            throw .invalidRequest("\(name(key)) is required: \(what).")
        }
        return value
    }

    public func requiredString(_ key: String) throws(GatewayError) -> String {
        guard let value = try string(key) else { throw .invalidRequest("\(name(key)) is required.") }
        return value
    }

    public func integer(_ key: String) throws(GatewayError) -> Int? {
        switch members[key] {
        case nil, .null: return nil
        case .number(let value) where value.rounded() == value && abs(value) < 1e15: return Int(value)
        default: throw .invalidRequest("\(name(key)) must be a whole number.")
        }
    }

    /// A whole number within `range`; the message names the range.
    public func integer(_ key: String, in range: ClosedRange<Int>) throws(GatewayError) -> Int? {
        switch members[key] {
        case nil, .null: return nil
        case .number(let value) where range.contains(Int(exactly: value) ?? .min): return Int(value)
        default:
            throw .invalidRequest("\(name(key)) must be a whole number from \(range.lowerBound) to \(range.upperBound).")
        }
    }

    public func bool(_ key: String) throws(GatewayError) -> Bool? {
        switch members[key] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: throw .invalidRequest("\(name(key)) must be true or false.")
        }
    }

    /// A list of strings, of at most `maximumCount`.
    public func strings(_ key: String, maximumCount: Int = .max) throws(GatewayError) -> [String]? {
        switch members[key] {
        case nil, .null: return nil
        case .array(let values) where values.count <= maximumCount:
            var strings: [String] = []
            for value in values {
                guard let string = value.stringValue else { throw .invalidRequest("\(name(key)) must be a list of strings.") }
                strings.append(string)
            }
            return strings
        default:
            throw .invalidRequest(
                maximumCount == .max
                    ? "\(name(key)) must be a list of strings."
                    : "\(name(key)) must be a list of at most \(maximumCount) strings.")
        }
    }

    /// A nested object; its messages name its members by their whole path
    /// (`rate_limits.ip.limit`).
    public func object(_ key: String) throws(GatewayError) -> JSONInput? {
        switch members[key] {
        case nil, .null: return nil
        case .object(let members): return JSONInput(members: members, path: name(key))
        default: throw .invalidRequest("\(name(key)) must be an object.")
        }
    }

    /// A list of at most `maximumCount` objects, each named by its index.
    public func objects(_ key: String, maximumCount: Int) throws(GatewayError) -> [JSONInput]? {
        switch members[key] {
        case nil, .null: return nil
        case .array(let values) where values.count <= maximumCount:
            var objects: [JSONInput] = []
            for (index, value) in values.enumerated() {
                objects.append(try JSONInput(value, path: "\(name(key))[\(index)]"))
            }
            return objects
        default: throw .invalidRequest("\(name(key)) must be a list of at most \(maximumCount) objects.")
        }
    }

    public func date(_ key: String) throws(GatewayError) -> Date? {
        guard let text = try string(key) else { return nil }
        guard let date = ISO8601DateFormatter().date(from: text) else {
            throw .invalidRequest("\(name(key)) must be an RFC 3339 time, e.g. 2027-01-31T00:00:00Z.")
        }
        return date
    }

    /// An absolute http(s) URL of at most 2048 bytes, or `nil` when absent.
    public func httpURL(_ key: String) throws(GatewayError) -> URL? {
        guard let text = try string(key) else { return nil }
        guard text.utf8.count <= 2048, let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host?.isEmpty == false
        else { throw .invalidRequest("\(name(key)) must be an absolute http(s) URL.") }
        return url
    }
}
