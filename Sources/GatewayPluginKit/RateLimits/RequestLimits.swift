public import GatewayCore

/// The rate limits a request meets, as a route sees them: each call touches
/// the request's counters (on the counters every replica shares) and answers
/// the verdicts, and the route decides what a refusal means. The gateway's
/// `RateLimiter` (in `GatewayRuntime`) is the implementation; routes reach it
/// through ``PublicRequest`` and ``AdminWorkLimit``.
public protocol RequestLimits: Sendable {
    /// Counts a request under the deployment's `ip` policy on its own, for
    /// requests answered before their app's limits apply (a malformed body,
    /// an app not in memory yet). Pass `clientCounted: true` to the later
    /// ``check(_:app:clientCounted:)`` of the same request.
    func countClient(_ clientIP: String) async throws -> LimitOutcome

    /// Applies the app's policies to the given subjects (policy name →
    /// subject) before the costly work: `.failures` and `.sends` policies
    /// reserve a unit. A refused outcome has given its reservations back.
    func check(_ subjects: [String: String], app: AppSettings, clientCounted: Bool) async throws -> LimitOutcome

    /// For an attempt whose credential is already verified: applies the
    /// policies (`.failures` ones only read) and records `event` in the same
    /// statement only if every policy allows, making `session`'s change
    /// there too (``RequestLedger/countAndRecord(_:ifAllowed:changing:)``).
    /// The outcome refuses when a policy refused; the event was recorded
    /// exactly when nothing refused and ``Recording/sessionChangeMade``.
    ///
    /// `onCountsAllowed` is called, before the statement is sent, when every
    /// policy that counts requests (`app`, `ip`, ...) has allowed this one
    /// from this replica's blocks, or rate limiting is off: the statement
    /// can then refuse it only for its user's failures (a `.failures`
    /// policy's read), or write no row when a rotation loses its race. Work
    /// that waits on the admission (a token's signature) may then begin
    /// beside the statement; what it makes still waits for the statement's
    /// commit. It is never called for a request a counting policy may
    /// refuse, so such work is never done for more requests than those
    /// policies let through.
    func admit(
        _ subjects: [String: String], app: AppSettings, clientCounted: Bool, recording event: AuditEvent,
        changing session: SessionChange?, onCountsAllowed: (@Sendable () -> Void)?
    ) async throws -> Recording

    /// Gives back the outcome's reservations and records `event` in the
    /// same statement, with `session`'s change. `user` is the verified user
    /// when the request named none: their failure counter is read there too,
    /// and the event recorded only if it allows.
    func release(
        _ outcome: LimitOutcome, readingFailuresOf user: String?, app: AppSettings, recording event: AuditEvent,
        changing session: SessionChange?
    ) async throws -> Recording

    /// One more failure of `user`, the user a check found when the request named none.
    func countFailure(ofUser user: String, app: AppSettings) async throws -> LimitOutcome

    /// Gives back the outcome's reservations.
    func release(_ outcome: LimitOutcome) async throws

    /// Touches counters no policy names, with limits the caller works out
    /// per request (send protection's prefix windows), in one statement on
    /// the counters every replica shares. With rate limiting off for the
    /// deployment, nothing is counted and every touch is allowed.
    func tally(_ touches: [CounterTouch]) async throws -> [CounterReading]
}

/// What a statement that writes a request's row found: the limits' verdicts,
/// and whether the session change asked for was made (always, without one).
public struct Recording: Sendable {
    public let limits: LimitOutcome
    /// `false` only when a rotation was asked for and the token was no
    /// longer the live one: the row was then not written.
    public let sessionChangeMade: Bool

    public init(limits: LimitOutcome, sessionChangeMade: Bool = true) {
        self.limits = limits
        self.sessionChangeMade = sessionChangeMade
    }
}
