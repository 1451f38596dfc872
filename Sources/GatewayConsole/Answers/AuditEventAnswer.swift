/// An audit event as the admin API answers it (openapi.yaml, `AuditEvent`):
/// the columns the audit page shows.
struct AuditEventAnswer: Decodable, Sendable {
    let occurredAt: String
    let event: String
    let outcome: String
    let reason: String?
    let userID: String?
    let clientIP: String?
    let requestID: String

    enum CodingKeys: String, CodingKey {
        case occurredAt = "occurred_at"
        case event, outcome, reason
        case userID = "user_id"
        case clientIP = "client_ip"
        case requestID = "request_id"
    }

    var templateValues: [String: Any] {
        var values: [String: Any] = [
            "occurred_at": occurredAt, "event": event, "outcome": outcome, "request_id": requestID,
            "failed": outcome == "failure",
        ]
        values["reason"] = reason
        values["user_id"] = userID
        values["client_ip"] = clientIP
        return values
    }
}
