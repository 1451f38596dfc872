public import GatewayCore

// What the phone-code plugin adds to the gateway's limits and errors.

extension RateLimitPolicy {
    /// Failed attempts per phone number.
    public static let phoneFailures = RateLimitPolicy(
        name: "phone_failures", limit: 10, periodSeconds: 900, counting: .failures)
    /// Code sends per phone number.
    public static let codeSendsPerNumber = RateLimitPolicy(
        name: "code_sends_number", limit: 5, periodSeconds: 3600, counting: .sends)
    /// Code sends per client IP.
    public static let codeSendsPerIP = RateLimitPolicy(
        name: "code_sends_ip", limit: 20, periodSeconds: 3600, counting: .sends, countsClientAddress: true)
    /// Code sends of the whole app in a day: what a bad night can cost. Past
    /// it, 429 `send_budget_exhausted`.
    public static let smsDailyBudget = RateLimitPolicy(
        name: "sms_daily_budget", limit: 10_000, periodSeconds: 86_400, counting: .sends, budgetChannel: "sms")
}

extension GatewayError.Code {
    /// 403: the app does not send codes to that number's country.
    public static let phoneNumberNotAllowed = GatewayError.Code(rawValue: "phone_number_not_allowed")
    /// 502: the SMS provider did not take the code.
    public static let smsDeliveryFailed = GatewayError.Code(rawValue: "sms_delivery_failed")
}
