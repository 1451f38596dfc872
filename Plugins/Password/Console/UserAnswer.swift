import GatewayConsoleKit

/// A user as the admin API answers it (openapi.yaml, `User`): no password,
/// no hash; the scheme its hash is in.
struct UserAnswer: Decodable, Sendable {
    let userID: String
    let disabled: Bool
    let passwordScheme: String
    let createdAt: String
    let lastLoginAt: String?
    /// True or false where a self-service code settled it; nil where an admin typed the address.
    let emailVerified: Bool?
    let profile: ProfileAnswer

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case disabled
        case passwordScheme = "password_scheme"
        case createdAt = "created_at"
        case lastLoginAt = "last_login_at"
        case emailVerified = "email_verified"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        userID = try container.decode(String.self, forKey: .userID)
        disabled = try container.decode(Bool.self, forKey: .disabled)
        passwordScheme = try container.decode(String.self, forKey: .passwordScheme)
        createdAt = try container.decode(String.self, forKey: .createdAt)
        lastLoginAt = try container.decodeIfPresent(String.self, forKey: .lastLoginAt)
        emailVerified = try container.decodeIfPresent(Bool.self, forKey: .emailVerified)
        profile = try ProfileAnswer(from: decoder)
    }

    var templateValues: [String: Any] {
        var values: [String: Any] = profile.values
        values["user_id"] = userID
        values["disabled"] = disabled
        values["password_scheme"] = passwordScheme
        values["created_at"] = createdAt
        values["last_login_at"] = lastLoginAt
        values["email_verified"] = emailVerified == true
        values["email_unverified"] = emailVerified == false
        return values
    }
}
