public import GatewayCore

extension UserProfile {
    /// The profile fields of `input`, each checked (``ProfileField/checked(_:at:)``);
    /// absent, `null` and empty ones left out. A refusal names the field
    /// under `path` (`answer.first_name`) when given.
    public static func read(_ input: JSONInput, at path: String? = nil) throws(GatewayError) -> UserProfile {
        var profile = UserProfile()
        for field in ProfileField.allCases {
            profile[field] = try field.checked(try input.string(field.name), at: path.map { "\($0).\(field.name)" })
        }
        return profile
    }
}

/// An answer's own members with a profile's fields beside them, as one JSON
/// object; a field the profile lacks is left out.
public struct WithProfile<Members: Encodable & Sendable>: Encodable, Sendable {
    public let members: Members
    public let profile: UserProfile

    public init(_ members: Members, profile: UserProfile) {
        self.members = members
        self.profile = profile
    }

    public func encode(to encoder: any Encoder) throws {
        try members.encode(to: encoder)
        var container = encoder.container(keyedBy: FieldName.self)
        for (field, value) in profile.fields { try container.encode(value, forKey: FieldName(stringValue: field.name)) }
    }

    private struct FieldName: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
