/// An app's own numbers for one rate-limit policy.
public struct RateLimitOverride: Sendable, Hashable, Codable {
    public var limit: Int
    public var periodSeconds: Int

    public init(limit: Int, periodSeconds: Int) {
        self.limit = limit
        self.periodSeconds = periodSeconds
    }

    enum CodingKeys: String, CodingKey {
        case limit
        case periodSeconds = "period_seconds"
    }
}
