public import GatewayCore
public import Logging
public import PostgresNIO

/// The `rate_limit_counters` table: adds to window counts and reads them
/// back, nothing more. Deciding is ``SlidingWindow``'s job.
public struct RateLimitRepository: Sendable {
    /// One counter to touch: a policy's window for one subject.
    public struct Touch: Sendable {
        public let window: SlidingWindow
        public let subject: String
        /// 1 to count this event, 0 to only read.
        public let increment: Int

        public init(window: SlidingWindow, subject: String, increment: Int) {
            self.window = window
            self.subject = subject
            self.increment = increment
        }
    }

    /// The counts after the touch: current window (including the increment) and previous window.
    public struct Counts: Sendable, Equatable {
        public let current: Int
        public let previous: Int
    }

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Adds the increments and reads every counter in one statement; the
    /// answer is in the order of `touches`.
    public func touch(_ touches: [Touch], appID: AppID) async throws -> [Counts] {
        guard !touches.isEmpty else { return [] }
        let rows = try await client.query(
            """
            WITH input AS (
                SELECT * FROM unnest(\(touches.map(\.window.policy.name))::text[], \(touches.map(\.subject))::text[],
                                     \(touches.map(\.window.windowStart))::int8[],
                                     \(touches.map { Int64($0.window.policy.periodSeconds) })::int8[],
                                     \(touches.map(\.increment))::int4[])
                    WITH ORDINALITY AS i(policy, subject, window_start, period, increment, position)
            ),
            added AS (
                INSERT INTO rate_limit_counters AS c (app_id, policy, subject, window_start, count, expires_at)
                SELECT \(appID.uuid), policy, subject, window_start, increment, to_timestamp(window_start + 2 * period)
                FROM input WHERE increment > 0
                ON CONFLICT (app_id, policy, subject, window_start) DO UPDATE SET count = c.count + excluded.count
                RETURNING policy, subject, count
            )
            SELECT coalesce(a.count, now_.count, 0), coalesce(before.count, 0)
            FROM input i
            LEFT JOIN added a ON a.policy = i.policy AND a.subject = i.subject
            LEFT JOIN rate_limit_counters now_ ON i.increment = 0 AND now_.app_id = \(appID.uuid)
                AND now_.policy = i.policy AND now_.subject = i.subject AND now_.window_start = i.window_start
            LEFT JOIN rate_limit_counters before ON before.app_id = \(appID.uuid)
                AND before.policy = i.policy AND before.subject = i.subject
                AND before.window_start = i.window_start - i.period
            ORDER BY i.position
            """, logger: logger)
        var counts: [Counts] = []
        for try await (current, previous) in rows.decode((Int, Int).self) {
            counts.append(Counts(current: current, previous: previous))
        }
        return counts
    }

    /// Deletes counters whose windows can no longer weigh; returns how many.
    public func deleteExpired() async throws -> Int {
        let rows = try await client.query(
            "WITH gone AS (DELETE FROM rate_limit_counters WHERE expires_at < now() RETURNING 1) SELECT count(*) FROM gone",
            logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
