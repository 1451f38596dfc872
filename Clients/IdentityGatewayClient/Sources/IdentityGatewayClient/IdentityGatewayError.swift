/// Every way a call can fail, by what the app should do about it; never a
/// raw HTTP status. Refusals the app cannot act on differently carry the
/// gateway's stable code (`error`) and its message.
public enum IdentityGatewayError: Error, Hashable, Sendable {
    /// The credential (or a code, or a second factor) was wrong; the gateway
    /// does not say which part. The session, if any, is untouched.
    case invalidCredentials
    /// The client holds no session, or the gateway refused it (ended by
    /// sign-out, an admin, a new password, its idle timeout or lifetime): it
    /// is removed, and the user signs in again. Also what a call gets whose
    /// answer arrived after a sign-out or another user's sign-in.
    case signedOut
    /// Over a rate limit: calls before `retryAfter` has passed fail at once
    /// with this error, without reaching the gateway.
    case rateLimited(retryAfter: Duration)
    /// The app is disabled by its operator.
    case appDisabled
    /// No answer: the gateway could not be reached, the connection dropped
    /// or the answer took longer than the configuration's `requestTimeout`.
    /// The session is kept; call again later.
    case network(String)
    /// The gateway answered but cannot serve now (`unavailable`, `busy`,
    /// `no_signing_key`, or a service it asks, such as the app's webhook or
    /// SMS provider, gave no answer); `retryAfter` where it said. The session is kept.
    case unavailable(code: String, retryAfter: Duration?)
    /// The account's address is not verified yet (an app whose sign-up is
    /// `verified_email`): confirm the code that was sent.
    case emailUnverified
    /// The account has a second factor: send its code too (password recovery).
    case secondFactorRequired
    /// The session signed in with one factor; sign in with the second and try again.
    case stepUpRequired
    /// The session's sign-in is too old for this change: sign in again.
    case recentSignInRequired
    /// Another account has that address.
    case emailTaken
    /// Any other refusal the gateway documents: `invalid_request`,
    /// `unknown_app`, `unsupported_credential_type`, `phone_number_not_allowed`, ...
    case refused(code: String, message: String)
    /// The session store failed to read, write or remove. A refresh whose
    /// successor could not be stored returns no token; the next launch
    /// recovers with the stored token within the app's grace window.
    case storage(String)
    /// The gateway's answer could not be read (not JSON, a field missing).
    case unexpectedAnswer(String)
}
