/// One rate limit: at most `limit` counted events per `periodSeconds`, per
/// subject (an IP, a user id, ...), per app.
public struct RateLimitPolicy: Sendable, Hashable, Codable {
    /// What a policy counts.
    public enum Counting: String, Sendable, Codable {
        /// Every request that reaches the check, refused ones included.
        case everyRequest = "requests"
        /// Only failed attempts: each attempt reserves its unit before the
        /// credential is checked (refused when none is left), and a
        /// successful one gives it back.
        case failures
        /// Only codes sent: each request reserves its unit before sending
        /// (refused when none is left) and gives it back when nothing goes
        /// out (too soon after the last code, delivery failed), so refused
        /// and early requests never lengthen a lockout.
        case sends
    }

    /// The policy's stable name, used in headers, storage and settings.
    public let name: String
    public var limit: Int
    public var periodSeconds: Int
    public let counting: Counting

    public init(name: String, limit: Int, periodSeconds: Int, counting: Counting) {
        self.name = name
        self.limit = limit
        self.periodSeconds = periodSeconds
        self.counting = counting
    }

    public static let limitRange = 1...1_000_000
    public static let periodRange = 1...86_400
}

extension RateLimitPolicy {
    /// Token requests per client IP.
    public static let clientIP = RateLimitPolicy(name: "ip", limit: 300, periodSeconds: 60, counting: .everyRequest)
    /// Every token request of one app, so one tenant cannot starve the rest.
    public static let app = RateLimitPolicy(name: "app", limit: 30_000, periodSeconds: 60, counting: .everyRequest)
    /// Failed attempts per user id: credential stuffing and guessing.
    public static let userFailures = RateLimitPolicy(
        name: "user_failures", limit: 10, periodSeconds: 900, counting: .failures)
    /// Failed attempts per phone number.
    public static let phoneFailures = RateLimitPolicy(
        name: "phone_failures", limit: 10, periodSeconds: 900, counting: .failures)
    /// Code sends per phone number.
    public static let codeSendsPerNumber = RateLimitPolicy(
        name: "code_sends_number", limit: 5, periodSeconds: 3600, counting: .sends)
    /// Code sends per client IP.
    public static let codeSendsPerIP = RateLimitPolicy(
        name: "code_sends_ip", limit: 20, periodSeconds: 3600, counting: .sends)

    /// The deployment's defaults, by name.
    public static let defaults: [String: RateLimitPolicy] = Dictionary(
        uniqueKeysWithValues: [clientIP, app, userFailures, phoneFailures, codeSendsPerNumber, codeSendsPerIP].map {
            ($0.name, $0)
        })
}
