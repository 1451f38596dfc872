public import Foundation
public import GatewayCore
public import GatewayPostgres
import CoreMetrics

/// Applies an app's rate-limit policies to one request: every policy's
/// counter is touched in one round trip, and the verdicts become the
/// `RateLimit-Policy` / `RateLimit` headers, or a 429 with `Retry-After`.
public struct RateLimiter: Sendable {
    /// The verdicts on one request.
    public struct Outcome: Sendable {
        public let verdicts: [(policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)]
        /// The refusing policy with the longest wait, if any.
        public let refusal: (policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)?

        init(verdicts: [(policy: RateLimitPolicy, verdict: SlidingWindow.Verdict)]) {
            self.verdicts = verdicts
            self.refusal = verdicts.filter { !$0.verdict.allowed }
                .max { $0.verdict.retryAfterSeconds < $1.verdict.retryAfterSeconds }
        }

        /// `RateLimit-Policy` lists every policy; `RateLimit` reports the one
        /// with the least room (IETF httpapi-ratelimit-headers).
        public var headers: [(name: String, value: String)] {
            guard !verdicts.isEmpty else { return [] }
            let policies = verdicts.map { "\"\($0.policy.name)\";q=\($0.policy.limit);w=\($0.policy.periodSeconds)" }
            let tightest = refusal ?? verdicts.min { $0.verdict.remaining < $1.verdict.remaining }!
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

        init(windows: [(window: SlidingWindow, subject: String)], counts: [GroupCommitWriter.Counts]) {
            self.init(
                verdicts: zip(windows, counts).map { entry, count in
                    (entry.window.policy, entry.window.verdict(current: count.current, previous: count.previous))
                })
        }

        static let unlimited = Outcome(verdicts: [])
    }

    private let writer: GroupCommitWriter
    private let settings: RateLimitSettings
    private let now: @Sendable () -> Double

    public init(
        writer: GroupCommitWriter, settings: RateLimitSettings,
        now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.writer = writer
        self.settings = settings
        self.now = now
    }

    public var trustedProxies: [CIDR] { settings.trustedProxies }

    /// Counts this request under its `.everyRequest` policies and checks the
    /// `.failures` ones, for the given subjects (policy name → subject).
    public func check(_ subjects: [String: String], app: AppSettings) async throws -> Outcome {
        guard settings.isEnabled else { return .unlimited }
        let windows = windows(for: subjects, app: app)
        let counts = try await writer.touch(touches(windows), appID: app.appID)
        return Outcome(windows: windows, counts: counts)
    }

    /// For an attempt whose credential is already verified: counts it as
    /// ``check(_:app:)`` does and, in the same statement, records `event`
    /// (its token's audit row) only if every policy allows. The outcome
    /// refuses exactly when the event was not recorded.
    public func admit(_ subjects: [String: String], app: AppSettings, recording event: AuditEvent) async throws -> Outcome {
        guard settings.isEnabled else {
            try await writer.record(event)
            return .unlimited
        }
        let windows = windows(for: subjects, app: app)
        let admission = try await writer.admit(touches(windows), appID: app.appID, recording: event)
        let outcome = Outcome(windows: windows, counts: admission.counts)
        // PostgreSQL and SlidingWindow make the same test on the same numbers;
        // should they ever differ, no token may leave on a verdict its row does not match.
        guard (outcome.refusal == nil) == admission.admitted else { throw GatewayError.unavailable }
        return outcome
    }

    /// Counts a failed attempt under the `.failures` policies of the subjects.
    public func countFailure(_ subjects: [String: String], app: AppSettings) async throws {
        guard settings.isEnabled else { return }
        let touches = windows(for: subjects, app: app)
            .filter { $0.window.policy.counting == .failures }
            .map { GroupCommitWriter.Touch(window: $0.window, subject: $0.subject, increment: 1) }
        _ = try await writer.touch(touches, appID: app.appID)
    }

    /// This request's touches: counted under `.everyRequest` policies, only read under `.failures` ones.
    private func touches(_ windows: [(window: SlidingWindow, subject: String)]) -> [GroupCommitWriter.Touch] {
        windows.map { .init(window: $0.window, subject: $0.subject, increment: $0.window.policy.counting == .everyRequest ? 1 : 0) }
    }

    private func windows(for subjects: [String: String], app: AppSettings) -> [(window: SlidingWindow, subject: String)] {
        let now = now()
        return subjects.keys.sorted().compactMap { name in
            settings.policy(name, for: app).map { (SlidingWindow(policy: $0, now: now), subjects[name]!) }
        }
    }

    /// The 429 for a refused request, with its headers.
    public static func refusal(_ outcome: Outcome) -> GatewayError {
        Counter(label: "gateway_rate_limit_refusals_total", dimensions: [("policy", outcome.refusal?.policy.name ?? "none")])
            .increment()
        var error = GatewayError(
            .rateLimited, status: 429, "Too many requests; retry after \(outcome.refusal?.verdict.retryAfterSeconds ?? 1) seconds.")
        error.headers = outcome.headers
        return error
    }
}
