public import Foundation
public import GatewayCore
import CoreMetrics

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
public struct RateLimiter: Sendable {
    /// The verdicts on one request.
    public struct Outcome: Sendable {
        public let verdicts: [(policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)]
        /// The refusing policy with the longest wait, if any.
        public let refusal: (policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)?
        /// What that policy counted: a user id, a phone number, a client address or IPv6 range.
        public let refusedSubject: String?
        /// The units this request reserved, to give back unless its attempt fails.
        public let reservations: [CounterTouch]
        /// The refusal came from the deployment's `ip` counter, which had
        /// refused this client's previous request too: the audit trail holds
        /// the first refusal of such a run, not each (a flood stays bounded).
        public let repeatsRefusal: Bool

        init(touches: [CounterTouch], counts: [CounterReading]) {
            let pairs = Array(zip(touches, counts))
            self.verdicts = pairs.map { touch, count in
                (touch.window.policy, touch.window.verdict(current: count.current, previous: count.previous, allowed: count.allowed))
            }
            let refused = zip(verdicts, touches).filter { !$0.0.verdict.allowed }
                .max { $0.0.verdict.retryAfterSeconds < $1.0.verdict.retryAfterSeconds }
            self.refusal = refused?.0
            self.refusedSubject = refused?.1.subject
            self.reservations = pairs.filter { $0.mode == .reserve && $1.allowed }.map(\.0)
            self.repeatsRefusal = pairs.contains { touch, count in
                touch.appID.uuid == AuditEvent.noApp && !count.allowed
                    && !touch.window.allows(current: count.current - 1, previous: count.previous)
            }
        }

        private init() {
            verdicts = []
            refusal = nil
            refusedSubject = nil
            reservations = []
            repeatsRefusal = false
        }

        private init(_ outcome: Outcome, reservations: [CounterTouch]) {
            verdicts = outcome.verdicts
            refusal = outcome.refusal
            refusedSubject = outcome.refusedSubject
            self.reservations = reservations
            repeatsRefusal = outcome.repeatsRefusal
        }

        /// The same verdicts, with the units reserved given back.
        var reservationsGivenBack: Outcome { Outcome(self, reservations: []) }

        private init(following earlier: Outcome, _ later: Outcome) {
            verdicts = earlier.verdicts + later.verdicts
            let refusals = [earlier, later].filter { $0.refusal != nil }
            let longest = refusals.max { $0.refusal!.verdict.retryAfterSeconds < $1.refusal!.verdict.retryAfterSeconds }
            refusal = longest?.refusal
            refusedSubject = longest?.refusedSubject
            reservations = earlier.reservations + later.reservations
            repeatsRefusal = earlier.repeatsRefusal || later.repeatsRefusal
        }

        /// This outcome with `earlier`'s verdicts too: one request's client
        /// count, made before its app was known, and its app's limits answer
        /// as one, so its headers list the same policies whatever was in memory.
        func following(_ earlier: Outcome) -> Outcome {
            earlier.verdicts.isEmpty ? self : Outcome(following: earlier, self)
        }

        /// `RateLimit-Policy` lists every policy once, by name; `RateLimit` reports the
        /// one with the least room (IETF httpapi-ratelimit-headers). Where a
        /// name is limited twice (the deployment's `ip` and an app's), the
        /// tighter verdict speaks for it.
        public var headers: [(name: String, value: String)] {
            guard !verdicts.isEmpty else { return [] }
            var tightestByName: [String: (policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)] = [:]
            var names: [String] = []
            for entry in verdicts {
                if let known = tightestByName[entry.policy.name] {
                    if Self.isTighter(entry, than: known) { tightestByName[entry.policy.name] = entry }
                } else {
                    names.append(entry.policy.name)
                    tightestByName[entry.policy.name] = entry
                }
            }
            let listed = names.sorted().map { tightestByName[$0]! }
            let policies = listed.map { "\"\($0.policy.name)\";q=\($0.policy.limit);w=\($0.policy.periodSeconds)" }
            let tightest = refusal ?? listed.min { $0.verdict.remaining < $1.verdict.remaining }!
            var headers = [
                (name: "RateLimit-Policy", value: policies.joined(separator: ", ")),
                (
                    name: "RateLimit",
                    value: "\"\(tightest.policy.name)\";r=\(tightest.verdict.remaining);t=\(max(tightest.verdict.retryAfterSeconds, 0))"
                ),
            ]
            if let refusal { headers.append((name: "Retry-After", value: "\(refusal.verdict.retryAfterSeconds)")) }
            return headers
        }

        private static func isTighter(
            _ entry: (policy: RateLimitPolicy, verdict: SlidingWindow.Verdict),
            than other: (policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)
        ) -> Bool {
            if entry.verdict.allowed != other.verdict.allowed { return !entry.verdict.allowed }
            return entry.verdict.allowed
                ? entry.verdict.remaining < other.verdict.remaining
                : entry.verdict.retryAfterSeconds > other.verdict.retryAfterSeconds
        }

        public static let unlimited = Outcome()
    }

    /// When a request's limits are applied.
    public enum Phase: Sendable {
        /// Before the credential is checked: `.failures` policies reserve.
        case beforeVerifying
        /// After a verifier said yes from memory: `.failures` policies are only read.
        case verified
    }

    private let ledger: any RequestLedger
    private let settings: RateLimitSettings
    private let now: @Sendable () -> Double

    public init(
        ledger: any RequestLedger, settings: RateLimitSettings,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.ledger = ledger
        self.settings = settings
        self.now = now
    }

    public var trustedProxies: [CIDR] { settings.trustedProxies }

    /// Counts a request under the deployment's `ip` policy on its own, for
    /// requests answered before their app's limits apply (a malformed body,
    /// an app not in memory yet). Pass `clientCounted: true` to the later
    /// ``check(_:app:phase:clientCounted:)`` of the same request.
    public func countClient(_ clientIP: String) async throws -> Outcome {
        guard settings.isEnabled, let touch = deploymentTouch(clientIP, now: now()) else { return .unlimited }
        let counts = try await ledger.count([touch])
        return Outcome(touches: [touch], counts: counts)
    }

    /// Applies the policies to the given subjects (policy name → subject).
    /// A refused outcome has given its reservations back already.
    public func check(
        _ subjects: [String: String], app: AppSettings, phase: Phase = .beforeVerifying, clientCounted: Bool = false
    ) async throws -> Outcome {
        guard settings.isEnabled else { return .unlimited }
        let touches = touches(for: subjects, app: app, phase: phase, clientCounted: clientCounted)
        let outcome = Outcome(touches: touches, counts: try await ledger.count(touches))
        // Should the release fail, the units stay taken until their window
        // passes: a limit may refuse early, never let more through.
        if outcome.refusal != nil { try? await release(outcome) }
        return outcome
    }

    /// For an attempt whose credential is already verified: applies the
    /// policies as ``check(_:app:phase:clientCounted:)`` does in the
    /// `.verified` phase and, in the same statement, records `event` (its
    /// token's audit row) only if every policy allows. The outcome refuses
    /// exactly when the event was not recorded.
    public func admit(
        _ subjects: [String: String], app: AppSettings, clientCounted: Bool = false, recording event: AuditEvent
    ) async throws -> Outcome {
        guard settings.isEnabled else {
            try await ledger.record(event)
            return .unlimited
        }
        let touches = touches(for: subjects, app: app, phase: .verified, clientCounted: clientCounted)
        let admission = try await ledger.countAndRecord(touches, ifAllowed: event)
        return Outcome(touches: touches, counts: admission.counts)
    }

    /// Gives back the outcome's reservations and records `event` in the same
    /// statement: how a verified attempt's token row is written. `user` is
    /// the verified user when the request named none: their `user_failures`
    /// counter is read in that statement too, and the event recorded only if
    /// it allows. Returns that read's verdict (unlimited without `user`),
    /// refusing exactly when the event was not recorded.
    public func release(
        _ outcome: Outcome, readingFailuresOf user: String? = nil, app: AppSettings, recording event: AuditEvent
    ) async throws -> Outcome {
        let reads = user.map { failureTouches(of: $0, app: app, phase: .verified) } ?? []
        let touches = outcome.reservations.map(\.release) + reads
        guard !touches.isEmpty else {
            try await ledger.record(event)
            return .unlimited
        }
        let admission = try await ledger.countAndRecord(touches, ifAllowed: event)
        return Outcome(touches: reads, counts: Array(admission.counts.suffix(reads.count)))
    }

    /// Counts a failed attempt against the user its check named when the
    /// request named none (``VerificationResult/rejected(reason:userID:)``):
    /// one more unit of `user_failures`, kept as the failure's count.
    public func countFailure(ofUser user: String, app: AppSettings) async throws -> Outcome {
        let touches = failureTouches(of: user, app: app, phase: .beforeVerifying)
        guard !touches.isEmpty else { return .unlimited }
        return Outcome(touches: touches, counts: try await ledger.count(touches))
    }

    private func failureTouches(of user: String, app: AppSettings, phase: Phase) -> [CounterTouch] {
        guard settings.isEnabled else { return [] }
        return touches(for: [RateLimitPolicy.userFailures.name: user], app: app, phase: phase, clientCounted: true)
    }

    /// Gives back the outcome's reservations.
    public func release(_ outcome: Outcome) async throws {
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

    /// The deployment's `ip` counter for a client, shared by every app.
    private func deploymentTouch(_ clientIP: String, now: Double) -> CounterTouch? {
        guard let policy = settings.policies[RateLimitPolicy.clientIP.name] else { return nil }
        return .init(
            appID: AppID(uuid: AuditEvent.noApp), window: SlidingWindow(policy: policy, now: now),
            subject: settings.subject(forClient: clientIP), mode: .count)
    }

    /// The `rate_limited` error for a refused request (the route adds the
    /// outcome's ``Outcome/headers`` to its answer); notes the refusal
    /// (reason `rate_limited`, the policy in `detail`) in its audit event.
    public static func refusal(_ outcome: Outcome, noting event: inout AuditEvent) -> GatewayError {
        event.reason = "rate_limited"
        event.detail["policy"] = outcome.refusal?.policy.name
        if outcome.refusal?.policy.countsClientAddress == true {
            // An IPv6 client is counted by its range: the row says which.
            event.detail["client_key"] = outcome.refusedSubject
        }
        Counter(label: "gateway_rate_limit_refusals_total", dimensions: [("policy", outcome.refusal?.policy.name ?? "none")])
            .increment()
        let seconds = outcome.refusal?.verdict.retryAfterSeconds ?? 1
        return GatewayError(
            .rateLimited, .tooManyRequests, "Too many requests; retry after \(seconds) seconds.", retryAfterSeconds: seconds)
    }
}
