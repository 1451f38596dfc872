/// A signing key as the admin API answers it (openapi.yaml, `Key`): its
/// public part and state.
struct KeyAnswer: Decodable, Sendable {
    let keyID: String
    let status: String
    let bits: Int
    let createdAt: String
    let activatedAt: String?

    enum CodingKeys: String, CodingKey {
        case keyID = "key_id"
        case status, bits
        case createdAt = "created_at"
        case activatedAt = "activated_at"
    }

    var isActive: Bool { status == "active" }

    var templateValues: [String: Any] {
        var values: [String: Any] = ["key_id": keyID, "status": status, "bits": bits, "created_at": createdAt]
        values["activated_at"] = activatedAt
        return values
    }
}
