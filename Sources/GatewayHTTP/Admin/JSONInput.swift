public import Foundation
public import GatewayCore
public import Hummingbird
import NIOCore

/// A JSON object from a request body, read strictly: unknown members and
/// wrongly typed values are 400s that name the member.
public struct JSONInput: Sendable {
    public static let maximumBodyBytes = 256 * 1024

    public let members: [String: JSONValue]

    public init(members: [String: JSONValue]) {
        self.members = members
    }

    /// Reads the request body as one JSON object.
    public static func read(_ request: Request) async throws -> JSONInput {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/json") == true else {
            throw GatewayError(.unsupportedMediaType, status: 415, "Send the request as application/json.")
        }
        let body = try await request.body.collect(upTo: maximumBodyBytes)
        guard let members = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body.readableBytesView)) else {
            throw GatewayError.invalidRequest("The body is not a JSON object.")
        }
        return JSONInput(members: members)
    }

    public func rejectUnknown(allowed: Set<String>) throws(GatewayError) {
        if let unknown = members.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .invalidRequest("\(unknown) is not a field of this request.")
        }
    }

    public func has(_ key: String) -> Bool { members[key] != nil }

    public func string(_ key: String) throws(GatewayError) -> String? {
        switch members[key] {
        case nil, .null: return nil
        case .string(let value): return value
        default: throw .invalidRequest("\(key) must be a string.")
        }
    }

    public func requiredString(_ key: String) throws(GatewayError) -> String {
        guard let value = try string(key) else { throw .invalidRequest("\(key) is required.") }
        return value
    }

    public func integer(_ key: String) throws(GatewayError) -> Int? {
        switch members[key] {
        case nil, .null: return nil
        case .number(let value) where value.rounded() == value && abs(value) < 1e15: return Int(value)
        default: throw .invalidRequest("\(key) must be a whole number.")
        }
    }

    public func bool(_ key: String) throws(GatewayError) -> Bool? {
        switch members[key] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: throw .invalidRequest("\(key) must be true or false.")
        }
    }

    public func strings(_ key: String) throws(GatewayError) -> [String]? {
        switch members[key] {
        case nil, .null: return nil
        case .array(let values):
            var strings: [String] = []
            for value in values {
                guard let string = value.stringValue else { throw .invalidRequest("\(key) must be a list of strings.") }
                strings.append(string)
            }
            return strings
        default: throw .invalidRequest("\(key) must be a list of strings.")
        }
    }

    public func object(_ key: String) throws(GatewayError) -> JSONInput? {
        switch members[key] {
        case nil, .null: return nil
        case .object(let members): return JSONInput(members: members)
        default: throw .invalidRequest("\(key) must be an object.")
        }
    }

    public func date(_ key: String) throws(GatewayError) -> Date? {
        guard let text = try string(key) else { return nil }
        guard let date = ISO8601DateFormatter().date(from: text) else {
            throw .invalidRequest("\(key) must be an RFC 3339 time, e.g. 2027-01-31T00:00:00Z.")
        }
        return date
    }
}
