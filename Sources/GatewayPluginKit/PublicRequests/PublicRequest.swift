public import GatewayCore
import Logging

/// One public request on its way through the ``PublicRequestGate``: its
/// audit row as it would be written now, the limits' verdicts so far (for
/// the answer's `RateLimit` headers), and whether the client's budget has
/// paid for it yet. Its phases, in order:
///
/// 1. ``beforeTheAppsLimits(_:)``: reading the request and finding its app
///    (``app(_:)``). Whatever refuses the request there (a malformed body,
///    an unknown or disabled app) still counts under the deployment's `ip`
///    policy, and an app not in memory is paid for under that policy before
///    it is looked up: made-up ids cost a lookup.
/// 2. ``check(_:app:)``: the app's limits, before the costly work (a
///    credential check, an SMS); `.failures` and `.sends` policies reserve
///    their unit here.
/// 3. The request's row: written with its counters when it succeeds
///    (``admit(_:app:recording:)``, ``release(readingFailuresOf:app:recording:)``),
///    or ``deny(_:)``, or ``recordEventually()`` for a route whose answer
///    does not wait on its row.
///
/// A limit's refusal is thrown as the 429 `rate_limited` and noted in the
/// row (``LimitOutcome/refusalError(noting:)``). Other failures of the limits'
/// database are thrown as what the client is answered (503 `unavailable`).
public struct PublicRequest: Sendable {
    /// The row as it would be written were the request refused now.
    public var row: AuditEvent
    /// Every verdict so far, the client's count included.
    public private(set) var limits = LimitOutcome.unlimited
    /// The client's address as the limits count it, `"unknown"` without a socket.
    public let clientIP: String
    private var clientCounted = false
    private let gate: PublicRequestGate
    private let logger: Logger

    init(gate: PublicRequestGate, row: AuditEvent, clientIP: String, logger: Logger) {
        self.gate = gate
        self.row = row
        self.clientIP = clientIP
        self.logger = logger
    }

    /// Runs `steps`, the part of the request answered before its app's
    /// limits apply, and translates what they throw into the client's answer.
    /// A refusal there still counts under the deployment's `ip` policy.
    public mutating func beforeTheAppsLimits<T>(
        _ steps: (inout PublicRequest) async throws -> T
    ) async throws(GatewayError) -> T {
        do {
            return try await steps(&self)
        } catch {
            let answer = ErrorResponder.translate(error, logger: logger)
            if answer.code != .rateLimited && !clientCounted { try await countClient() }
            throw answer
        }
    }

    /// The enabled app `appID` names, found in memory or read within the
    /// gate's ``DatabaseRetry``; 404 for no such app, 403 `app_disabled`.
    public mutating func app(_ appID: AppID) async throws(GatewayError) -> Tenant {
        let (tenants, retry) = (gate.tenants, gate.databaseRetry)
        let tenant: Tenant
        if tenants.cachedTenant(for: appID) != nil {
            // In memory: answered at once, so no timer and no retry around it (a timed
            // attempt costs two tasks). Should the app be dropped just now, the lookup
            // loads it within the attempt's timeout, without the failover retry.
            tenant = try await tenants.tenant(for: appID, within: retry.attemptTimeout)
        } else {
            try await countClient()
            do {
                tenant = try await retry.run { try await tenants.tenant(for: appID, within: retry.attemptTimeout) }
            } catch {
                throw ErrorResponder.translate(error, logger: logger)
            }
        }
        guard tenant.settings.isEnabled else { throw GatewayError(.appDisabled, .forbidden, "This app is disabled.") }
        return tenant
    }

    /// The app's limits on `subjects` (policy name → subject) and the
    /// client's address under `ip`, before the costly work. A refused check
    /// has given its reservations back.
    public mutating func check(_ subjects: [String: String], app: AppSettings) async throws(GatewayError) {
        let limiter = gate.limits
        let subjects = withClient(subjects)
        let counted = clientCounted
        // Counted once a request: a later check or admission of it does not count the client again.
        clientCounted = true
        try await apply { try await limiter.check(subjects, app: app, clientCounted: counted) }
    }

    /// One more failure of `user`, the user a check found when the request
    /// named none (``VerificationResult/rejected(reason:userID:)``), kept as
    /// the failure's count.
    public mutating func countFailure(ofUser user: String, app: AppSettings) async throws(GatewayError) {
        let limiter = gate.limits
        try await apply { try await limiter.countFailure(ofUser: user, app: app) }
    }

    /// For a request whose credential was checked before its limits (a
    /// cheap verifier, a refresh): applies them and writes `issued`, its
    /// success row, in one statement, only if they allow, with `session`'s
    /// change. Returns `false` when the row was not written because a
    /// rotation asked for was not made (another request spent the token first).
    @discardableResult
    public mutating func admit(
        _ subjects: [String: String], app: AppSettings, recording issued: AuditEvent, changing session: SessionChange? = nil
    ) async throws(GatewayError) -> Bool {
        let limiter = gate.limits
        let subjects = withClient(subjects)
        let counted = clientCounted
        clientCounted = true
        return try await recording(after: limits) {
            try await limiter.admit(subjects, app: app, clientCounted: counted, recording: issued, changing: session)
        }
    }

    /// For a request whose limits were checked before its credential: gives
    /// back the units it reserved and writes `issued` in one statement, with
    /// `session`'s change. `user` is the user its check found when it named
    /// none: their failure limit is read in that statement too, and `issued`
    /// written only if it allows.
    public mutating func release(
        readingFailuresOf user: String?, app: AppSettings, recording issued: AuditEvent, changing session: SessionChange? = nil
    ) async throws(GatewayError) {
        let limiter = gate.limits
        let limits = limits
        try await recording(after: limits.reservationsGivenBack) {
            try await limiter.release(limits, readingFailuresOf: user, app: app, recording: issued, changing: session)
        }
    }

    /// Gives back the units ``check(_:app:)`` reserved: the attempt is no
    /// failure after all (no code went out, no active key). Should that
    /// fail, the units stay taken until their window passes: a limit may
    /// refuse early, never let more through.
    public mutating func giveBackReservations() async {
        try? await gate.limits.release(limits)
        limits = limits.reservationsGivenBack
    }

    /// Writes the row as a failure answered `error` (its reason, unless the
    /// route gave one): kept in memory while PostgreSQL is away
    /// (``RequestLedger/recordEventually(_:)``), and left out for a client
    /// the deployment's `ip` policy refused just before (the first refusal
    /// of such a run is in the trail). Returns the row.
    @discardableResult
    public func deny(_ error: GatewayError) async -> AuditEvent {
        var denied = row
        if denied.reason == nil { denied.reason = error.code.rawValue }
        if !limits.repeatsRefusal { await gate.ledger.recordEventually(denied) }
        return denied
    }

    /// How a public request that failed ends, on every route: `error`
    /// translated into what the client is answered, carrying the limits'
    /// headers; for a route whose units count work done (`givingBack`, a
    /// code sent), the units it reserved given back unless a limit refused
    /// it; and its row written (``deny(_:)``). Returns the answer to throw
    /// and the row.
    public mutating func end(
        failing error: any Error, givingBack: Bool = false
    ) async -> (answer: HeaderedError, row: AuditEvent) {
        let answer = ErrorResponder.translate(error, logger: logger)
        if givingBack && limits.refusal == nil { await giveBackReservations() }
        let row = await deny(answer)
        return (HeaderedError(answer, headers: limits.headers), row)
    }

    /// Writes `event`, a row of its own beside the request's, with
    /// `session`'s change in the same statement (a session ended for a
    /// token's reuse), before the request is answered: 503 when it cannot be.
    public func record(_ event: AuditEvent, changing session: SessionChange) async throws(GatewayError) {
        do {
            _ = try await gate.ledger.countAndRecord([], ifAllowed: event, changing: session)
        } catch {
            logger.error("session change failed", metadata: ["error": "\(String(reflecting: error))"])
            throw .unavailable
        }
    }

    /// Writes the row as it stands, for an answer that does not wait on it
    /// (kept in memory while PostgreSQL is away).
    public func recordEventually() async {
        await gate.ledger.recordEventually(row)
    }

    private mutating func countClient() async throws(GatewayError) {
        clientCounted = true
        let limiter = gate.limits
        let clientIP = clientIP
        try await apply { try await limiter.countClient(clientIP) }
    }

    private func withClient(_ subjects: [String: String]) -> [String: String] {
        subjects.merging([RateLimitPolicy.clientIP.name: clientIP]) { _, client in client }
    }

    /// Runs a limiter call whose outcome follows the verdicts so far;
    /// throws its refusal.
    private mutating func apply(_ call: () async throws -> LimitOutcome) async throws(GatewayError) {
        do {
            limits = try await call().following(limits)
        } catch {
            throw ErrorResponder.translate(error, logger: logger)
        }
        if limits.refusal != nil { throw limits.refusalError(noting: &row) }
    }

    /// ``apply(_:)`` for a call that writes the success row, whose verdicts
    /// follow `earlier`: the token is withheld when the write fails. Returns
    /// whether a session change asked for was made.
    @discardableResult
    private mutating func recording(
        after earlier: LimitOutcome, _ call: () async throws -> Recording
    ) async throws(GatewayError) -> Bool {
        let recorded: Recording
        do {
            recorded = try await call()
        } catch {
            logger.error("audit write failed; token withheld", metadata: ["error": "\(String(reflecting: error))"])
            throw .unavailable
        }
        limits = recorded.limits.following(earlier)
        if limits.refusal != nil { throw limits.refusalError(noting: &row) }
        return recorded.sessionChangeMade
    }
}
