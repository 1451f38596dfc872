public import GatewayCore

/// What a code route answers, 202 whether or not the address signs anybody
/// in: `{"expires_in", "resend_after"}` (`POST /v1/phone_codes`, `POST /v1/email_codes`).
public struct CodeSent: Encodable, Sendable {
    public let expires_in: Int
    public let resend_after: Int

    public init(lifetimeSeconds: Int, resendAfterSeconds: Int) {
        self.expires_in = lifetimeSeconds
        self.resend_after = resendAfterSeconds
    }

    /// The 429 of a send within the resend delay, ``CodeStore/storeUnlessTooSoon(code:for:in:attempts:lifetimeSeconds:resendAfterSeconds:queueing:)``'s `wait` seconds from the next.
    public static func tooSoon(retryAfter wait: Int) -> GatewayError {
        GatewayError(
            .rateLimited, .tooManyRequests, "A code was sent just now; retry after \(wait) seconds.", retryAfterSeconds: wait)
    }
}
