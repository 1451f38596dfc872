import GatewayConsoleKit

/// A phone number bound to a user, as the admin API answers it
/// (openapi.yaml, `PhoneBinding`).
struct PhoneBindingAnswer: Decodable, Sendable {
    let phoneNumber: String
    let userID: String
    let profile: ProfileAnswer

    enum CodingKeys: String, CodingKey {
        case phoneNumber = "phone_number"
        case userID = "user_id"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        phoneNumber = try container.decode(String.self, forKey: .phoneNumber)
        userID = try container.decode(String.self, forKey: .userID)
        profile = try ProfileAnswer(from: decoder)
    }

    var templateValues: [String: Any] {
        var values: [String: Any] = profile.values
        values["phone_number"] = phoneNumber
        values["user_id"] = userID
        return values
    }
}
