/// One token profile an app issues (`token_profiles` in the admin API): the
/// profile's name and its settings, as `{"type": "<name>", ...settings}`.
public struct TokenProfileEntry: Sendable, Hashable, Codable {
    /// Every app issues Layer identity tokens unless told otherwise.
    public static let layer = TokenProfileEntry(type: "layer")

    public var type: String
    /// The members besides `type`, as the admin wrote them (secrets sealed at rest).
    public var options: [String: JSONValue]

    public init(type: String, options: [String: JSONValue] = [:]) {
        self.type = type
        self.options = options
    }

    public init(from decoder: any Decoder) throws {
        var members = try decoder.singleValueContainer().decode([String: JSONValue].self)
        guard case .string(let type)? = members.removeValue(forKey: "type") else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a profile needs a type"))
        }
        self.init(type: type, options: members)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(asJSON)
    }

    /// `{"type": ..., ...options}`.
    public var asJSON: JSONValue {
        var members = options
        members["type"] = .string(type)
        return .object(members)
    }
}
