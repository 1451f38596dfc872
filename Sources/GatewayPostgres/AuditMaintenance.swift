public import Logging
public import PostgresNIO
public import ServiceLifecycle

/// Keeps the audit trail, the rate-limit counters and the sessions tidy:
/// monthly audit partitions exist three months ahead, partitions older than
/// the retention are dropped whole, expired counters are deleted, and so are
/// sessions revoked or past their absolute end more than
/// ``endedSessionDays`` ago (kept until then for the admin API's list of a
/// user's sessions; an idle-ended one waits for those too, so that the
/// index this reads is on no column a refresh changes), and second-step
/// tickets a day after they expired.
public struct AuditMaintenance: Service {
    public static let monthsAhead = 3
    public static let endedSessionDays = 30

    private let client: PostgresClient
    private let logger: Logger
    /// Keep events this many days; `nil` keeps them forever.
    private let retentionDays: Int?
    private let interval: Duration

    public init(client: PostgresClient, logger: Logger, retentionDays: Int?, interval: Duration = .seconds(60)) {
        self.client = client
        self.logger = logger
        self.retentionDays = retentionDays
        self.interval = interval
    }

    /// Repeats ``runOnce()`` every `interval`; the server runs the first pass
    /// itself once migrations are applied.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while (try? await Task.sleep(for: interval)) != nil {
                do {
                    try await runOnce()
                } catch {
                    logger.warning(
                        "audit maintenance failed; will retry", metadata: ["error": "\(PostgresErrorText.describe(error))"])
                }
            }
        }
    }

    /// One pass; returns the partitions it dropped.
    @discardableResult
    public func runOnce() async throws -> [String] {
        try await client.tracedQuery("SELECT audit_events_ensure_partitions(now()::date, \(Self.monthsAhead)::int)", logger: logger)
        var dropped: [String] = []
        if let retentionDays {
            let rows = try await client.tracedQuery(
                "SELECT audit_events_drop_partitions_before(now() - make_interval(days => \(retentionDays)::int))",
                logger: logger)
            for name in try rows.decode(String.self) { dropped.append(name) }
            if !dropped.isEmpty { logger.notice("dropped old audit partitions", metadata: ["partitions": "\(dropped)"]) }
        }
        // Counters whose windows can no longer weigh in any verdict.
        try await client.tracedQuery("DELETE FROM rate_limit_counters WHERE expires_at < now()", logger: logger)
        try await client.tracedQuery(
            """
            DELETE FROM sessions
            WHERE least(coalesce(revoked_at, expires_at), expires_at)
                < now() - make_interval(days => \(Self.endedSessionDays)::int)
            """, logger: logger)
        // Human-check tokens once no provider would take them again.
        try await client.tracedQuery("DELETE FROM human_check_tokens WHERE expires_at < now()", logger: logger)
        // Second-step tickets a day after they expired (spent or not): kept that long for an incident's questions.
        try await client.tracedQuery("DELETE FROM mfa_tickets WHERE expires_at < now() - interval '1 day'", logger: logger)
        return dropped
    }
}
