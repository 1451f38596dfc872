/// One rate limit: at most `limit` counted events per `periodSeconds`, per
/// subject (an IP, a user id, ...), per app.
public struct RateLimitPolicy: Sendable, Hashable {
    /// What a policy counts.
    public enum Counting: String, Sendable {
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
    /// Its subject is a client address: an IPv6 client is counted by its
    /// range (``RateLimitSettings/ipv6PrefixLength``), and a refusal's audit
    /// row says which range.
    public let countsClientAddress: Bool
    /// When this policy's period last changed for the app, in seconds since
    /// the epoch (``RateLimitChanges``): for one period after it, its
    /// windows count as if the whole limit had been spent at that moment
    /// (``SlidingWindow``).
    public var periodChangedAt: Int64?
    /// The channel (`sms`, `email`) whose spend this policy caps for the
    /// whole app: a refusal is 429 `send_budget_exhausted`, and counts
    /// `gateway_send_budget_exhausted_total`, the metric to alert on.
    public let budgetChannel: String?

    public init(
        name: String, limit: Int, periodSeconds: Int, counting: Counting, countsClientAddress: Bool = false,
        budgetChannel: String? = nil
    ) {
        self.name = name
        self.limit = limit
        self.periodSeconds = periodSeconds
        self.counting = counting
        self.countsClientAddress = countsClientAddress
        self.budgetChannel = budgetChannel
    }

    /// The same policy with another limit and period.
    public func with(limit: Int, periodSeconds: Int) -> RateLimitPolicy {
        var policy = self
        policy.limit = limit
        policy.periodSeconds = periodSeconds
        return policy
    }

    public static let limitRange = 1...1_000_000
    public static let periodRange = 1...86_400
}

extension RateLimitPolicy {
    /// Token requests per client IP.
    public static let clientIP = RateLimitPolicy(
        name: "ip", limit: 300, periodSeconds: 60, counting: .everyRequest, countsClientAddress: true)
    /// Every token request of one app, so one tenant cannot starve the rest.
    public static let app = RateLimitPolicy(name: "app", limit: 30_000, periodSeconds: 60, counting: .everyRequest)
    /// Failed attempts per user id: credential stuffing and guessing.
    public static let userFailures = RateLimitPolicy(
        name: "user_failures", limit: 10, periodSeconds: 900, counting: .failures)

    /// The `user_failures` subject of a user a credential's own proof named
    /// (a provider's ID token, a passkey): counted apart from the failures
    /// of requests that only name the user, so wrong passwords sent under
    /// someone's id never lock them out of a credential that proves them,
    /// while their own proven failures (a genuine ID token for the wrong
    /// nonce) still hold that credential. A user id has no control
    /// characters, so no user id is this subject.
    public static func provenUserSubject(_ userID: String) -> String { "\u{1}proven\u{1}" + userID }

    /// Wrong second-factor codes (TOTP or recovery) per user: guessing a
    /// six-digit code. Reserved before the code is checked.
    public static let mfaFailures = RateLimitPolicy(
        name: "mfa_failures", limit: 10, periodSeconds: 900, counting: .failures)

    /// Refreshes refused (an unknown, spent, ended or malformed refresh
    /// token) per client address: a client trying many tokens. A refresh
    /// names no user it could be counted against before its proof holds.
    /// Unknown, spent and expired MFA tickets count here too.
    public static let refreshFailures = RateLimitPolicy(
        name: "refresh_failures", limit: 60, periodSeconds: 900, counting: .failures, countsClientAddress: true)

    /// Costly admin work (a webhook test call, a password hashed, a key
    /// generated) by one admin token.
    public static let adminWorkPerToken = RateLimitPolicy(
        name: "admin_work_token", limit: 30, periodSeconds: 60, counting: .everyRequest)
    /// Costly admin work for one app, whichever token asks.
    public static let adminWorkPerApp = RateLimitPolicy(
        name: "admin_work_app", limit: 60, periodSeconds: 60, counting: .everyRequest)

    /// Admin requests refused for their token, per client address and
    /// replica (console sign-ins with a bad token among them), counted in memory.
    public static let adminAuthFailures = RateLimitPolicy(
        name: "admin_auth_failures_ip", limit: 30, periodSeconds: 60, counting: .failures, countsClientAddress: true)
    /// Token validations, per client address and replica, counted in memory.
    public static let validations = RateLimitPolicy(
        name: "validate_ip", limit: 120, periodSeconds: 60, counting: .everyRequest, countsClientAddress: true)

    /// Policies only the deployment's configuration sets: no app's request
    /// is counted by them, so an app's override would mean nothing.
    public static let deploymentOnlyNames: Set<String> = [adminAuthFailures.name, validations.name]

    /// The gateway's own policies; plugins bring theirs (``CredentialPlugin``).
    public static let gatewayPolicies = [
        clientIP, app, userFailures, mfaFailures, refreshFailures, adminWorkPerToken, adminWorkPerApp, adminAuthFailures, validations,
    ]
}
