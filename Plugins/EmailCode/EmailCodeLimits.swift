public import GatewayCore

// What the email-code plugin adds to the gateway's limits and errors.

extension RateLimitPolicy {
    /// Failed codes per address.
    public static let emailFailures = RateLimitPolicy(
        name: "email_failures", limit: 10, periodSeconds: 900, counting: .failures)
    /// Code sends per address (the resend delay spaces them besides).
    public static let emailSendsPerAddress = RateLimitPolicy(
        name: "email_sends_address", limit: 5, periodSeconds: 3600, counting: .sends)
    /// Code sends per client IP.
    public static let emailSendsPerIP = RateLimitPolicy(
        name: "email_sends_ip", limit: 20, periodSeconds: 3600, counting: .sends, countsClientAddress: true)
    /// Code sends per app, whatever the address: what one app's mail may cost.
    public static let emailSendsPerApp = RateLimitPolicy(
        name: "email_sends_app", limit: 2000, periodSeconds: 3600, counting: .sends)
    /// Mails of the whole app in a day (codes, sign-ups, recoveries): past
    /// it, 429 `send_budget_exhausted`.
    public static let emailDailyBudget = RateLimitPolicy(
        name: "email_daily_budget", limit: 50_000, periodSeconds: 86_400, counting: .sends, budgetChannel: "email")
}
