public import GatewayCore
import Hummingbird
import Logging

/// One public request on its way through the ``PublicRequestGate``: the
/// driver of its ``PublicRequestMachine``. A route tells it each step
/// (``app(_:)``, ``limits(_:claim:)``, ``verdict(_:)``, ``succeed(recording:changing:)``, ...);
/// the machine decides what that step costs and in which order the limits
/// and the audit trail are asked, and this runs it. It also holds the
/// request's audit row as it would be written now and the limits' verdicts
/// so far (for the answer's `RateLimit` headers).
///
/// A limit's refusal is thrown as the 429 `rate_limited` and noted in the
/// row (``LimitOutcome/refusalError(noting:)``). Other failures of the limits'
/// database are thrown as what the client is answered (503 `unavailable`).
/// Every failure ends in ``end(failing:)``, which the gate calls.
public struct PublicRequest: Sendable {
    public typealias Cost = PublicRequestMachine.Cost

    /// The row as it would be written were the request refused now.
    public var row: AuditEvent
    /// Every verdict so far, the client's count included.
    public private(set) var limits = LimitOutcome.unlimited
    /// The client's address as the limits count it, `"unknown"` without a socket.
    public var clientIP: String { machine.client }
    /// Where the request is.
    public var state: PublicRequestMachine.State { machine.state }
    private var machine: PublicRequestMachine
    /// The app's settings once found: what the limits count under.
    private var app: AppSettings?
    private let gate: PublicRequestGate
    private let logger: Logger

    init(gate: PublicRequestGate, row: AuditEvent, clientIP: String, cost: Cost?, logger: Logger) {
        self.gate = gate
        self.row = row
        self.machine = PublicRequestMachine(client: clientIP, cost: cost)
        self.logger = logger
    }

    /// Names how this request's work is paid for, where the route learns it
    /// from the request (the token endpoint, by credential); once.
    public mutating func paying(_ cost: Cost) throws(GatewayError) {
        _ = try step(.paying(cost))
    }

    /// The enabled app `appID` names, found in memory or read within the
    /// gate's ``DatabaseRetry``; 404 for no such app, 403 `app_disabled`.
    /// An app not in memory is paid for under the deployment's `ip` policy
    /// before it is looked up: made-up ids cost a lookup.
    public mutating func app(_ appID: AppID) async throws(GatewayError) -> Tenant {
        let (tenants, retry) = (gate.tenants, gate.databaseRetry)
        let cached = tenants.cachedTenant(for: appID) != nil
        try await run(try step(.lookingUpApp(cached: cached)))
        let tenant: Tenant
        if cached {
            // In memory: answered at once, so no timer and no retry around it (a timed
            // attempt costs two tasks). Should the app be dropped just now, the lookup
            // loads it within the attempt's timeout, without the failover retry.
            tenant = try await tenants.tenant(for: appID, within: retry.attemptTimeout)
        } else {
            do {
                tenant = try await retry.run { try await tenants.tenant(for: appID, within: retry.attemptTimeout) }
            } catch {
                throw ErrorResponder.translate(error, logger: logger)
            }
        }
        guard tenant.settings.isEnabled else { throw GatewayError(.appDisabled, .forbidden, "This app is disabled.") }
        app = tenant.settings
        _ = try step(.appFound)
        return tenant
    }

    /// The app's limits on `subjects` (policy name → subject), with the
    /// user a sign-in names (`claim`): checked now, before the costly work,
    /// or held for the success row's statement where the cost is
    /// ``Cost/verifyFirst``.
    public mutating func limits(_ subjects: [String: String], claim: PublicRequestMachine.Claim? = nil) async throws(GatewayError) {
        try await run(try step(.limits(subjects, claim: claim)))
    }

    /// `subjects` counted now, whatever the cost model: a suspicion paid
    /// for before a costly step (walking a refresh token's family).
    public mutating func beforeCostlyWork(_ subjects: [String: String]) async throws(GatewayError) {
        try await run(try step(.beforeCostlyWork(subjects)))
    }

    /// What proves who asks (a session's refresh token, a sign-in's ticket)
    /// is refused: counted against the client's `refresh_failures`, with
    /// the subjects held for the row; throws the 429 past it.
    public mutating func holderRefused() async throws(GatewayError) {
        try await run(try step(.holderRefused))
    }

    /// ``holderRefused()``, then 401 with the row saying why. `reason` is
    /// made only once the count allowed the request (it may walk a token's family).
    public mutating func refuseHolder(_ reason: @autoclosure () -> String) async throws(GatewayError) -> Never {
        try await holderRefused()
        row.reason = reason()
        throw GatewayError.invalidCredentials
    }

    /// What a sign-in's credential check found: a rejection is counted
    /// (against the user it found, where the request's own count did not
    /// name them); a verification names whose failures the success row's
    /// statement reads.
    public mutating func verdict(_ verdict: PublicRequestMachine.Verdict) async throws(GatewayError) {
        try await run(try step(.verdict(verdict)))
    }

    /// The verified user changed while the request ran: counted as a
    /// rejection, then 401 with `reason` in the row.
    public mutating func lapsed(_ reason: String) async throws(GatewayError) -> Never {
        try await run(try step(.lapsed))
        row.reason = reason
        throw GatewayError.invalidCredentials
    }

    /// The failure about to be thrown is not the client's (no active key):
    /// what the request reserved is given back first.
    public mutating func noFault() async {
        _ = try? await run(try step(.noFault))
    }

    /// Writes `issued`, the success row, in one statement with the
    /// request's counters and `session`'s change: only if the limits allow
    /// (a 429 otherwise). Returns `false` when the row was not written
    /// because a rotation asked for was not made (another request spent the
    /// token first); the request may then read again and succeed once more.
    /// `onCountsAllowed` is called before the statement is sent where every
    /// policy that counts requests has allowed this one in memory
    /// (``RequestLimits/admit(_:app:clientCounted:recording:changing:onCountsAllowed:)``):
    /// work that waits on the admission may begin beside the statement.
    @discardableResult
    public mutating func succeed(
        recording issued: AuditEvent, changing session: SessionChange? = nil,
        onCountsAllowed: (@Sendable () -> Void)? = nil
    ) async throws(GatewayError) -> Bool {
        let made = try await run(
            try step(.succeeded(.withItsCounters)), recording: issued, changing: session, onCountsAllowed: onCountsAllowed)
        if !made { _ = try step(.changeNotMade) }
        return made
    }

    /// The success row was written by the route's own statement, with the
    /// change it records (a factor enrolled, a passkey added).
    public mutating func succeededInTheRoutesStatement() async throws(GatewayError) {
        try await run(try step(.succeeded(.byTheRoute)))
    }

    /// Writes the row as it stands, as the request's success, for an answer
    /// that does not wait on it (kept in memory while PostgreSQL is away).
    public mutating func succeedWithoutWaiting() async throws(GatewayError) {
        try await run(try step(.succeeded(.eventually)))
    }

    /// Writes `event`, a row of its own beside the request's, with
    /// `session`'s change in the same statement (a session ended for a
    /// token's reuse), before the request is answered: 503 when it cannot be.
    public mutating func record(_ event: AuditEvent, changing session: SessionChange) async throws(GatewayError) {
        try await run(try step(.recordingBeside), recording: event, changing: session)
    }

    /// Counters no policy names, with limits the route works out per request
    /// (send protection's prefix windows and risky counts;
    /// ``RequestLimits/tally(_:)``). Beside the machine's steps: these only
    /// count and read, never reserve, so a failure has nothing to give back.
    public func tally(_ touches: [CounterTouch]) async throws(GatewayError) -> [CounterReading] {
        do {
            return try await gate.limits.tally(touches)
        } catch {
            throw ErrorResponder.translate(error, logger: logger)
        }
    }

    /// A success's answer, with the limits' headers: only once its row is written.
    mutating func answering(_ response: Response) throws(GatewayError) -> Response {
        _ = try step(.answering)
        return limits.answering(response)
    }

    /// How a public request that failed ends, on every route: `error`
    /// translated into what the client is answered, carrying the limits'
    /// headers, and whatever the machine says a failure costs from where the
    /// request got to (the client's count, reservations given back for work
    /// not done) and its row written: kept in memory while PostgreSQL is
    /// away (``RequestLedger/recordEventually(_:)``), and left out for a
    /// client the deployment's `ip` policy refused just before (the first
    /// refusal of such a run is in the trail). Returns the answer to throw and the row.
    public mutating func end(failing error: any Error) async -> (answer: HeaderedError, row: AuditEvent) {
        var answer = ErrorResponder.translate(error, logger: logger)
        let actions: [PublicRequestMachine.Action]
        do {
            actions = try machine.receive(.failed(refusedByLimit: limits.refusal != nil))
        } catch {
            logger.error("public request ended twice", metadata: ["step": "\(error)"])
            return (HeaderedError(answer, headers: limits.headers), row)
        }
        var denied = row
        for action in actions {
            switch action {
            case .countClient:
                do {
                    try await run([.countClient])
                } catch {
                    // Over the client's budget: the refusal is the answer.
                    answer = error
                }
            case .giveBack:
                await giveBack()
            case .recordDenial:
                denied = row
                if denied.reason == nil { denied.reason = answer.code.rawValue }
                if !limits.repeatsRefusal { await gate.ledger.recordEventually(denied) }
            default:
                logger.error("public request failure took an unexpected step", metadata: ["step": "\(stepName(action))"])
            }
        }
        return (HeaderedError(answer, headers: limits.headers), denied)
    }

    /// The machine's answer to `event`; a step out of order is a bug, answered 500.
    private mutating func step(_ event: PublicRequestMachine.Event) throws(GatewayError) -> [PublicRequestMachine.Action] {
        do {
            return try machine.receive(event)
        } catch {
            logger.error("public request out of order", metadata: ["step": "\(error)"])
            throw .internalError
        }
    }

    /// Runs the machine's actions in order; the ones that write a row write
    /// `recording` (the request's row as it stands, without one) with
    /// `session`'s change; an admission calls `onCountsAllowed` where its
    /// counts allowed it in memory. Returns whether a session change asked for was made.
    @discardableResult
    private mutating func run(
        _ actions: [PublicRequestMachine.Action], recording written: AuditEvent? = nil, changing session: SessionChange? = nil,
        onCountsAllowed: (@Sendable () -> Void)? = nil
    ) async throws(GatewayError) -> Bool {
        var made = true
        for action in actions {
            let (limiter, clientIP) = (gate.limits, clientIP)
            switch action {
            case .countClient:
                try await apply { try await limiter.countClient(clientIP) }
            case .lookUpApp, .answer:
                break
            case .check(let subjects, let clientCounted):
                let (app, subjects) = (try foundApp(), withClient(subjects))
                try await apply { try await limiter.check(subjects, app: app, clientCounted: clientCounted) }
            case .countFailure(let user):
                let app = try foundApp()
                try await apply { try await limiter.countFailure(ofUser: user, app: app) }
            case .admit(let subjects, let clientCounted):
                let (app, subjects, issued) = (try foundApp(), withClient(subjects), written ?? row)
                made = try await recording(after: limits) {
                    try await limiter.admit(
                        subjects, app: app, clientCounted: clientCounted, recording: issued, changing: session,
                        onCountsAllowed: onCountsAllowed)
                }
            case .release(let user):
                let (app, limits, issued) = (try foundApp(), limits, written ?? row)
                made = try await recording(after: limits.reservationsGivenBack) {
                    try await limiter.release(limits, readingFailuresOf: user, app: app, recording: issued, changing: session)
                }
            case .giveBack:
                await giveBack()
            case .recordEventually:
                await gate.ledger.recordEventually(written ?? row)
            case .recordBeside:
                guard let event = written, let session else { throw .internalError }
                do {
                    _ = try await gate.ledger.countAndRecord([], ifAllowed: event, changing: session)
                } catch {
                    logger.error("session change failed", metadata: ["error": "\(String(reflecting: error))"])
                    throw .unavailable
                }
            case .recordDenial:
                // Only a failure writes a denial, in end(failing:).
                throw .internalError
            }
        }
        return made
    }

    /// Gives back what the request's checks reserved. Should that fail, the
    /// units stay taken until their window passes: a limit may refuse
    /// early, never let more through.
    private mutating func giveBack() async {
        if !limits.reservations.isEmpty { try? await gate.limits.release(limits) }
        limits = limits.reservationsGivenBack
    }

    private func foundApp() throws(GatewayError) -> AppSettings {
        guard let app else { throw .internalError }
        return app
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
