import GatewayCore

/// The validator's report as the API answers it (openapi.yaml, `TokenValidation`).
struct TokenValidationAnswer: Decodable, Sendable {
    struct Problem: Decodable, Sendable {
        let code: String
        let message: String
    }

    let valid: Bool
    let appID: String?
    let problems: [Problem]
    let header: JSONValue
    let claims: JSONValue

    enum CodingKeys: String, CodingKey {
        case valid
        case appID = "app_id"
        case problems, header, claims
    }
}
