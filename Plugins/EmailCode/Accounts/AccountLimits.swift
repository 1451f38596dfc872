public import GatewayCore

// What self-service adds to the gateway's limits and errors.

extension RateLimitPolicy {
    /// Wrong self-service codes per address (verification, recovery) or user (address change).
    public static let accountCodeFailures = RateLimitPolicy(
        name: "account_code_failures", limit: 10, periodSeconds: 900, counting: .failures)
    /// Sign-ups per client IP.
    public static let signUpsPerIP = RateLimitPolicy(
        name: "sign_ups_ip", limit: 10, periodSeconds: 3600, counting: .sends, countsClientAddress: true)
    /// Sign-ups per app, whatever the address: what a flood of new accounts may cost.
    public static let signUpsPerApp = RateLimitPolicy(
        name: "sign_ups_app", limit: 1000, periodSeconds: 3600, counting: .sends)
}

extension GatewayError.Code {
    /// 403: the account has a second factor; a recovery must pass it too (`second_factor`).
    public static let secondFactorRequired = GatewayError.Code(rawValue: "mfa_required")
    /// 409: the user is not a self-service account waiting for its address to be verified.
    public static let notAwaitingVerification = GatewayError.Code(rawValue: "not_awaiting_verification")
}
