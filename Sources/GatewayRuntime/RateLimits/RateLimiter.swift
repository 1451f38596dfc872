public import Foundation
public import GatewayCore
public import GatewayPluginKit

/// Applies the rate-limit policies to one request: every policy's counter is
/// touched in one statement, and the verdicts become the `RateLimit-Policy` /
/// `RateLimit` headers, or a 429 with `Retry-After`.
///
/// `.everyRequest` policies count each request, refused ones included.
/// `.failures` policies reserve a unit before the credential is checked: the
/// reservation and its test are one conditional add under the counter row's
/// lock, so no more than the limit's attempts reach a verifier in a window,
/// whatever the concurrency and however many gateways share the database.
/// A failed attempt keeps its unit; a verified one, or one another policy
/// refused, gives it back. `.sends` policies (code sends) reserve the same
/// way; the caller gives the unit back when no code went out.
///
/// The `ip` subject is limited twice over: by the deployment's `ip` policy on
/// one counter shared by every app (also before the app is known, see
/// ``countClient(_:)``), and, where an app sets its own `ip` limit, by that
/// too.
public struct RateLimiter: RequestLimits {
    /// When a request's limits are applied.
    enum Phase: Sendable {
        /// Before the credential is checked: `.failures` policies reserve.
        case beforeVerifying
        /// After a verifier said yes from memory: `.failures` policies are only read.
        case verified
    }

    private let ledger: any RequestLedger
    private let settings: RateLimitSettings
    private let leases: CounterLeases
    private let now: @Sendable () -> Double

    /// - Parameter leases: this replica's blocks of the high limits
    ///   (``RateLimitSettings/leaseMinimumLimit``); one per replica.
    public init(
        ledger: any RequestLedger, settings: RateLimitSettings, leases: CounterLeases = CounterLeases(),
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.ledger = ledger
        self.settings = settings
        self.leases = leases
        self.now = now
    }

    public var trustedProxies: [CIDR] { settings.trustedProxies }

    /// Counts a request under the deployment's `ip` policy on its own, for
    /// requests answered before their app's limits apply (a malformed body,
    /// an app not in memory yet). Pass `clientCounted: true` to the later
    /// ``check(_:app:clientCounted:)`` of the same request.
    public func countClient(_ clientIP: String) async throws -> LimitOutcome {
        guard settings.isEnabled, let touch = deploymentTouch(clientIP, now: now()) else { return .unlimited }
        return LimitOutcome(touches: [touch], counts: try await apply([touch], recording: nil).counts)
    }

    /// Applies the policies to the given subjects (policy name → subject).
    /// A refused outcome has given its reservations back already.
    public func check(
        _ subjects: [String: String], app: AppSettings, clientCounted: Bool = false
    ) async throws -> LimitOutcome {
        guard settings.isEnabled else { return .unlimited }
        let touches = touches(for: subjects, app: app, phase: .beforeVerifying, clientCounted: clientCounted)
        let outcome = LimitOutcome(touches: touches, counts: try await apply(touches, recording: nil).counts)
        // Should the release fail, the units stay taken until their window
        // passes: a limit may refuse early, never let more through.
        if outcome.refusal != nil { try? await release(outcome) }
        return outcome
    }

    /// For an attempt whose credential is already verified: applies the
    /// policies as ``check(_:app:clientCounted:)`` does in the
    /// `.verified` phase and, in the same statement, records `event` (its
    /// token's audit row) only if every policy allows, with `session`'s
    /// change. The event was recorded unless a policy refused or a rotation
    /// was not made (``Recording``). `onCountsAllowed` is called before the
    /// statement when every counting policy has allowed the request from
    /// this replica's blocks
    /// (``RequestLimits/admit(_:app:clientCounted:recording:changing:onCountsAllowed:)``).
    public func admit(
        _ subjects: [String: String], app: AppSettings, clientCounted: Bool = false, recording event: AuditEvent,
        changing session: SessionChange? = nil, onCountsAllowed: (@Sendable () -> Void)? = nil
    ) async throws -> Recording {
        guard settings.isEnabled else {
            onCountsAllowed?()
            guard let session else {
                try await ledger.record(event)
                return Recording(limits: .unlimited)
            }
            return Self.recording([], try await ledger.countAndRecord([], ifAllowed: event, changing: session))
        }
        let touches = touches(for: subjects, app: app, phase: .verified, clientCounted: clientCounted)
        return Self.recording(
            touches, try await apply(touches, recording: event, changing: session, onCountsAllowed: onCountsAllowed))
    }

    /// Gives back the outcome's reservations and records `event` in the same
    /// statement: how a verified attempt's token row is written. `user` is
    /// the verified user when the request named none: their `user_failures`
    /// counter is read in that statement too, and the event recorded only if
    /// it allows; `session`'s change is made there too. Returns that read's
    /// verdict (unlimited without `user`), and whether a rotation asked for was made.
    public func release(
        _ outcome: LimitOutcome, readingFailuresOf user: String? = nil, app: AppSettings, recording event: AuditEvent,
        changing session: SessionChange? = nil
    ) async throws -> Recording {
        let reads = user.map { failureTouches(of: $0, app: app, phase: .verified) } ?? []
        let touches = outcome.reservations.map(\.release) + reads
        guard !touches.isEmpty || session != nil else {
            try await ledger.record(event)
            return Recording(limits: .unlimited)
        }
        let admission = try await ledger.countAndRecord(touches, ifAllowed: event, changing: session)
        let readings = Admission(
            counts: Array(admission.counts.suffix(reads.count)), admitted: admission.admitted,
            sessionChanged: admission.sessionChanged)
        return Self.recording(reads, readings)
    }

    /// The verdicts of `touches` as `admission` read them, and whether a
    /// session change asked for was made: the row was written unless a
    /// verdict refused or a rotation was not made.
    private static func recording(_ touches: [CounterTouch], _ admission: Admission) -> Recording {
        let limits = touches.isEmpty ? .unlimited : LimitOutcome(touches: touches, counts: admission.counts)
        return Recording(limits: limits, sessionChangeMade: admission.admitted || limits.refusal != nil)
    }

    /// Counts a failed attempt against the user its check named when the
    /// request named none (``VerificationResult/rejected(reason:userID:)``):
    /// one more unit of `user_failures`, kept as the failure's count.
    public func countFailure(ofUser user: String, app: AppSettings) async throws -> LimitOutcome {
        let touches = failureTouches(of: user, app: app, phase: .beforeVerifying)
        guard !touches.isEmpty else { return .unlimited }
        return LimitOutcome(touches: touches, counts: try await ledger.count(touches))
    }

    private func failureTouches(of user: String, app: AppSettings, phase: Phase) -> [CounterTouch] {
        guard settings.isEnabled else { return [] }
        return touches(for: [RateLimitPolicy.userFailures.name: user], app: app, phase: phase, clientCounted: true)
    }

    /// Touches counters no policy names (``RequestLimits/tally(_:)``); with
    /// rate limiting off, touches nothing and allows all.
    public func tally(_ touches: [CounterTouch]) async throws -> [CounterReading] {
        guard settings.isEnabled else { return touches.map { _ in CounterReading(current: 0, previous: 0, allowed: true) } }
        return touches.isEmpty ? [] : try await ledger.count(touches)
    }

    /// Gives back the outcome's reservations.
    public func release(_ outcome: LimitOutcome) async throws {
        _ = try await ledger.count(outcome.reservations.map(\.release))
    }

    private func touches(
        for subjects: [String: String], app: AppSettings, phase: Phase, clientCounted: Bool
    ) -> [CounterTouch] {
        let now = now()
        var touches: [CounterTouch] = []
        for name in subjects.keys.sorted() {
            if name == RateLimitPolicy.clientIP.name {
                if !clientCounted, let touch = deploymentTouch(subjects[name]!, now: now) { touches.append(touch) }
                guard app.rateLimits[name] != nil else { continue }
            }
            guard let policy = settings.policy(name, for: app) else { continue }
            let subject = policy.countsClientAddress ? settings.subject(forClient: subjects[name]!) : subjects[name]!
            let mode: CounterTouch.Mode =
                switch (policy.counting, phase) {
                case (.everyRequest, _): .count
                case (.failures, .beforeVerifying), (.sends, _): .reserve
                case (.failures, .verified): .read
                }
            touches.append(.init(appID: app.appID, window: SlidingWindow(policy: policy, now: now), subject: subject, mode: mode))
        }
        return touches
    }

    /// What a sent touch stands for in the request's own list.
    private enum Sent {
        /// The request's touch at this index, as it is.
        case asIs(Int)
        /// The request's touch at this index, of a leased counter, touched exactly.
        case exact(Int)
        /// A block asked for in place of the request's touch at this index.
        case lease(Int)
        /// A past window's unspent units, given back.
        case giveBack
    }

    /// Applies `touches`, those of leased counters from this replica's
    /// blocks where it can (``CounterLeases``), and records `event` in the
    /// same statement if every touch allows; no statement at all when every
    /// touch was served from a block and there is no event. The readings
    /// are in the order of `touches`, each as its mode reads.
    /// `onCountsAllowed` is called before the statement when it counts
    /// nothing that can refuse: it only reads (a user's failures) and gives
    /// past windows' units back.
    private func apply(
        _ touches: [CounterTouch], recording event: AuditEvent?, changing session: SessionChange? = nil,
        onCountsAllowed: (@Sendable () -> Void)? = nil
    ) async throws -> Admission {
        var readings = [CounterReading?](repeating: nil, count: touches.count)
        var sent: [CounterTouch] = []
        var roles: [Sent] = []
        for (index, touch) in touches.enumerated() {
            guard touch.mode == .count, settings.leases(touch.window.policy) else {
                sent.append(touch)
                roles.append(.asIs(index))
                continue
            }
            let (plan, giveBack) = leases.plan(touch)
            if let giveBack {
                sent.append(giveBack)
                roles.append(.giveBack)
            }
            switch plan {
            case .served(let reading):
                readings[index] = reading
            case .lease(let units):
                sent.append(
                    CounterTouch(appID: touch.appID, window: touch.window, subject: touch.subject, mode: .reserve, units: units))
                roles.append(.lease(index))
            case .exact:
                sent.append(touch)
                roles.append(.exact(index))
            }
        }
        if sent.allSatisfy({ $0.mode == .read || $0.mode == .release }) { onCountsAllowed?() }
        let admission: Admission
        do {
            if let event {
                admission = try await ledger.countAndRecord(sent, ifAllowed: event, changing: session)
            } else if sent.isEmpty {
                admission = Admission(counts: [], admitted: true)
            } else {
                let counts = try await ledger.count(sent)
                admission = Admission(counts: counts, admitted: counts.allSatisfy(\.allowed))
            }
        } catch {
            for case .lease(let index) in roles { leases.abandon(touches[index]) }
            throw error
        }
        for (role, reading) in zip(roles, admission.counts) {
            switch role {
            case .asIs(let index):
                readings[index] = reading
            case .exact(let index):
                leases.record(touches[index], reading: reading, leased: false)
                readings[index] = reading
            case .lease(let index):
                leases.record(touches[index], reading: reading, leased: true)
                // As a count reads: this request's unit in, the block's others not.
                readings[index] = CounterReading(
                    current: reading.current - max(reading.granted - 1, 0), previous: reading.previous,
                    allowed: reading.granted > 0)
            case .giveBack:
                break
            }
        }
        return Admission(counts: readings.map { $0! }, admitted: admission.admitted, sessionChanged: admission.sessionChanged)
    }

    /// The deployment's `ip` counter for a client, shared by every app.
    private func deploymentTouch(_ clientIP: String, now: Double) -> CounterTouch? {
        guard let policy = settings.policies[RateLimitPolicy.clientIP.name] else { return nil }
        return .init(
            appID: AppID(uuid: AuditEvent.noApp), window: SlidingWindow(policy: policy, now: now),
            subject: settings.subject(forClient: clientIP), mode: .count)
    }
}
