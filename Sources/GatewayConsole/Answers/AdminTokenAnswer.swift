/// An admin token as the admin API answers it (openapi.yaml, `AdminToken`);
/// `token`, the secret, only in the answer that created it.
struct AdminTokenAnswer: Decodable, Sendable {
    let id: String
    let name: String
    let scope: String
    let createdAt: String
    let expiresAt: String?
    let revokedAt: String?
    let lastUsedAt: String?
    let token: String?

    enum CodingKeys: String, CodingKey {
        case id, name, scope
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case revokedAt = "revoked_at"
        case lastUsedAt = "last_used_at"
        case token
    }

    var templateValues: [String: Any] {
        var values: [String: Any] = ["id": id, "name": name, "scope": scope, "created_at": createdAt]
        values["expires_at"] = expiresAt
        values["revoked_at"] = revokedAt
        values["last_used_at"] = lastUsedAt
        values["token"] = token
        return values
    }
}
