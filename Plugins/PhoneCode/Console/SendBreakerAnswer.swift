import GatewayConsoleKit

/// The app's pumping breakers as the admin API answers them (openapi.yaml, `SendBreaker`).
struct SendBreakersAnswer: Decodable, Sendable {
    struct Breaker: Decodable, Sendable {
        let channel: String
        let prefix: String
        let open: Bool
        let openUntil: String
        let threshold: Int

        enum CodingKeys: String, CodingKey {
            case channel, prefix, open, threshold
            case openUntil = "open_until"
        }
    }

    let sendBreakers: [Breaker]

    enum CodingKeys: String, CodingKey {
        case sendBreakers = "send_breakers"
    }
}
