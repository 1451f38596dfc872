public import GatewayCore
public import Hummingbird
public import HTTPTypes
import CoreMetrics

/// The verdicts on one request.
public struct LimitOutcome: Sendable {
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

    public init(touches: [CounterTouch], counts: [CounterReading]) {
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

    private init(_ outcome: LimitOutcome, reservations: [CounterTouch]) {
        verdicts = outcome.verdicts
        refusal = outcome.refusal
        refusedSubject = outcome.refusedSubject
        self.reservations = reservations
        repeatsRefusal = outcome.repeatsRefusal
    }

    /// The same verdicts, with the units reserved given back.
    var reservationsGivenBack: LimitOutcome { LimitOutcome(self, reservations: []) }

    private init(following earlier: LimitOutcome, _ later: LimitOutcome) {
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
    func following(_ earlier: LimitOutcome) -> LimitOutcome {
        earlier.verdicts.isEmpty ? self : LimitOutcome(following: earlier, self)
    }

    /// `RateLimit-Policy` lists every policy once, by name; `RateLimit` reports the
    /// one with the least room (IETF httpapi-ratelimit-headers). Where a
    /// name is limited twice (the deployment's `ip` and an app's), the
    /// tighter verdict speaks for it.
    public var headers: HTTPFields {
        guard !verdicts.isEmpty else { return [:] }
        // The tightest verdict of each name, in the order of the names: a few entries, so a list.
        var listed: [(policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)] = []
        listed.reserveCapacity(verdicts.count)
        for entry in verdicts {
            if let index = listed.firstIndex(where: { $0.policy.name == entry.policy.name }) {
                if Self.isTighter(entry, than: listed[index]) { listed[index] = entry }
            } else {
                listed.append(entry)
            }
        }
        listed.sort { $0.policy.name < $1.policy.name }
        var policies = ""
        policies.reserveCapacity(48 * listed.count)
        for (index, entry) in listed.enumerated() {
            if index > 0 { policies += ", " }
            policies += "\"\(entry.policy.name)\";q=\(entry.policy.limit);w=\(entry.policy.periodSeconds)"
        }
        let tightest = refusal ?? listed.min { $0.verdict.remaining < $1.verdict.remaining }!
        var headers: HTTPFields = [
            .rateLimitPolicy: policies,
            .rateLimit: "\"\(tightest.policy.name)\";r=\(tightest.verdict.remaining);t=\(max(tightest.verdict.retryAfterSeconds, 0))",
        ]
        if let refusal { headers[.retryAfter] = String(refusal.verdict.retryAfterSeconds) }
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

    public static let unlimited = LimitOutcome()

    /// `response` as a public request's success is answered on every
    /// route: with these verdicts' headers, and never cached (it carries a
    /// token, a code's fate or a challenge).
    public func answering(_ response: Response) -> Response {
        var response = response
        response.headers.replace(with: headers)
        // Answers made for this (the token's) carry it already, and a field set is a copy of them all.
        if response.headers[.cacheControl] != "no-store" { response.headers[.cacheControl] = "no-store" }
        return response
    }

    /// The `rate_limited` error for a refused request (the route adds the
    /// ``headers`` to its answer); notes the refusal
    /// (reason `rate_limited`, the policy in `detail`) in its audit event.
    public func refusalError(noting event: inout AuditEvent) -> GatewayError {
        event.reason = "rate_limited"
        event.detail["policy"] = refusal?.policy.name
        if refusal?.policy.countsClientAddress == true {
            // An IPv6 client is counted by its range: the row says which.
            event.detail["client_key"] = refusedSubject
        }
        Counter(label: "gateway_rate_limit_refusals_total", dimensions: [("policy", refusal?.policy.name ?? "none")])
            .increment()
        let seconds = refusal?.verdict.retryAfterSeconds ?? 1
        if let channel = refusal?.policy.budgetChannel {
            event.reason = "send_budget_exhausted"
            Counter(label: "gateway_send_budget_exhausted_total", dimensions: [("channel", channel)]).increment()
            return GatewayError(
                .sendBudgetExhausted, .tooManyRequests,
                "This app's \(channel) budget is spent; retry after \(seconds) seconds.", retryAfterSeconds: seconds)
        }
        return GatewayError(
            .rateLimited, .tooManyRequests, "Too many requests; retry after \(seconds) seconds.", retryAfterSeconds: seconds)
    }
}

extension HTTPField.Name {
    /// The limits' headers (IETF httpapi-ratelimit-headers).
    public static let rateLimitPolicy = HTTPField.Name("RateLimit-Policy")!
    public static let rateLimit = HTTPField.Name("RateLimit")!
}
