/// What the NDJSON import answered (openapi.yaml, `users:import`): totals,
/// and each bad line.
struct ImportReportAnswer: Decodable, Sendable {
    struct BadLine: Decodable, Sendable {
        let line: Int
        let userID: String?
        let error: String
        let message: String

        enum CodingKeys: String, CodingKey {
            case line
            case userID = "user_id"
            case error, message
        }

        var templateValues: [String: Any] {
            var values: [String: Any] = ["line": line, "error": error, "message": message]
            values["user_id"] = userID
            return values
        }
    }

    let lines: Int
    let created: Int
    let replaced: Int
    let failed: Int
    let errors: [BadLine]
    let errorsTruncated: Bool

    enum CodingKeys: String, CodingKey {
        case lines, created, replaced, failed, errors
        case errorsTruncated = "errors_truncated"
    }

    var templateValues: [String: Any] {
        [
            "lines": lines, "created": created, "replaced": replaced, "failed": failed,
            "errors": errors.map(\.templateValues),
            "errors_truncated": errorsTruncated, "has_errors": !errors.isEmpty,
        ]
    }
}
