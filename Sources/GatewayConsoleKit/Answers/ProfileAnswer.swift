import GatewayCore

/// The profile fields (``GatewayCore/UserProfile/fieldNames``) an answer
/// carries beside its own members, as a user's or a phone binding's do.
public struct ProfileAnswer: Decodable, Sendable {
    /// The fields set, by name.
    public let values: [String: String]

    struct FieldKey: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: FieldKey.self)
        var values: [String: String] = [:]
        for name in UserProfile.fieldNames {
            if let value = try container.decodeIfPresent(String.self, forKey: FieldKey(stringValue: name)) { values[name] = value }
        }
        self.values = values
    }
}
