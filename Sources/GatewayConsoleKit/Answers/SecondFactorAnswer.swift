/// A user's second factor as the admin API answers it (openapi.yaml,
/// `SecondFactor`): never its secret nor a recovery code.
public struct SecondFactorAnswer: Decodable, Sendable {
    public let confirmed: Bool
    public let createdAt: String
    public let lastUsedAt: String?
    public let recoveryCodesLeft: Int

    enum CodingKeys: String, CodingKey {
        case confirmed
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case recoveryCodesLeft = "recovery_codes_left"
    }

    /// What the templates show (`mfa.created_at`, ...).
    public var templateValues: [String: Any] {
        [
            "confirmed": confirmed, "created_at": createdAt, "last_used_at": lastUsedAt ?? "never",
            "recovery_codes_left": recoveryCodesLeft,
        ]
    }
}
