/// A user's session as the admin API answers it (openapi.yaml, `Session`):
/// never a token. What a console page shows of a user's sessions.
public struct SessionAnswer: Decodable, Sendable {
    public let sessionID: String
    public let credentialType: String
    public let amr: [String]
    public let deviceLabel: String?
    public let createdAt: String
    public let lastUsedAt: String
    public let expiresAt: String

    enum CodingKeys: String, CodingKey {
        case sessionID = "session_id"
        case credentialType = "credential_type"
        case amr
        case deviceLabel = "device_label"
        case createdAt = "created_at"
        case lastUsedAt = "last_used_at"
        case expiresAt = "expires_at"
    }

    /// What the templates show (`session.device_label`, ...).
    public var templateValues: [String: Any] {
        [
            "session_id": sessionID, "credential_type": credentialType, "amr": amr.joined(separator: " "),
            "device_label": deviceLabel ?? "", "created_at": createdAt, "last_used_at": lastUsedAt, "expires_at": expiresAt,
        ]
    }
}
