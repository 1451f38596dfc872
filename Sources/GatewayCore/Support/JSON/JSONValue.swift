/// Any JSON value: plugin options as the operator wrote them, or the parts of a
/// token under inspection.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

extension JSONValue {
    /// A copy with every string at `path` replaced by `transform(itsPath, value)`:
    /// `path` names members, `"*"` every element of an array, and `itsPath`
    /// is the one reached, dotted, with indices (`"users.0.password"`). What
    /// is not there, or not a string, is left as it is. How a plugin or a
    /// profile names its secrets, once (``mappingStrings(at:_:)`` for each).
    public func mappingStrings(
        at path: [String], _ transform: (_ path: String, _ value: String) throws -> String
    ) rethrows -> JSONValue {
        try mapping(path[...], reached: [], transform)
    }

    private func mapping(
        _ rest: ArraySlice<String>, reached: [String], _ transform: (String, String) throws -> String
    ) rethrows -> JSONValue {
        guard let step = rest.first else {
            guard case .string(let value) = self else { return self }
            return .string(try transform(reached.joined(separator: "."), value))
        }
        switch self {
        case .object(var members) where step != "*":
            guard let member = members[step] else { return self }
            members[step] = try member.mapping(rest.dropFirst(), reached: reached + [step], transform)
            return .object(members)
        case .array(let elements) where step == "*":
            return .array(
                try elements.enumerated().map { index, element in
                    try element.mapping(rest.dropFirst(), reached: reached + [String(index)], transform)
                })
        default:
            return self
        }
    }
}
