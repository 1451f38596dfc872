public import GatewayCore
public import Logging
public import PostgresNIO
public import ServiceLifecycle
import Foundation

/// The `rate_limit_counters` table: adds to window counts and reads them
/// back, nothing more; deciding is ``SlidingWindow``'s job. Touches of
/// concurrent requests are batched (group commit, see ``GroupCommitQueue``)
/// into one statement; each request gets the counts as if the requests of a
/// batch had run one after another. Run it as a service.
public final class RateLimitRepository: Service, Sendable {
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

    private struct Request: Sendable {
        let appID: AppID
        let touches: [Touch]
    }

    private let client: PostgresClient
    private let logger: Logger
    private let queue: GroupCommitQueue<Request, [Counts]>

    public init(client: PostgresClient, logger: Logger, timeout: Duration = .seconds(2)) {
        self.client = client
        self.logger = logger
        self.queue = GroupCommitQueue(
            name: "rate limit", logger: logger, maximumBatch: 500, maximumQueue: 20_000, timeout: timeout
        ) { requests in
            try await Self.touch(requests, client: client, logger: logger)
        }
    }

    public func run() async throws {
        await queue.run()
        let (requests, batches) = queue.counts
        logger.info(
            "rate-limit counters stopped",
            metadata: [
                "requests": "\(requests)", "batches": "\(batches)",
                "average_batch": "\(String(format: "%.1f", batches == 0 ? 0 : Double(requests) / Double(batches)))",
            ])
    }

    /// Adds the increments and reads every counter; the answer is in the order of `touches`.
    public func touch(_ touches: [Touch], appID: AppID) async throws -> [Counts] {
        guard !touches.isEmpty else { return [] }
        return try await queue.submit(Request(appID: appID, touches: touches))
    }

    private static func touch(_ requests: [Request], client: PostgresClient, logger: Logger) async throws -> [[Counts]] {
        let entries = requests.flatMap { request in request.touches.map { (request.appID, $0) } }
        // Each entry's current count: the count after the whole batch, less what
        // entries after it added, so the batch reads as if run in order.
        let rows = try await client.query(
            """
            WITH input AS (
                SELECT * FROM unnest(\(entries.map(\.0.uuid))::uuid[], \(entries.map(\.1.window.policy.name))::text[],
                                     \(entries.map(\.1.subject))::text[], \(entries.map(\.1.window.windowStart))::int8[],
                                     \(entries.map { Int64($0.1.window.policy.periodSeconds) })::int8[],
                                     \(entries.map(\.1.increment))::int4[])
                    WITH ORDINALITY AS i(app_id, policy, subject, window_start, period, increment, position)
            ),
            totals AS (
                SELECT app_id, policy, subject, window_start, max(period) AS period, sum(increment)::int4 AS added
                FROM input GROUP BY app_id, policy, subject, window_start
            ),
            added AS (
                INSERT INTO rate_limit_counters AS c (app_id, policy, subject, window_start, count, expires_at)
                SELECT app_id, policy, subject, window_start, added, to_timestamp(window_start + 2 * period)
                FROM totals WHERE added > 0
                ORDER BY app_id, policy, subject, window_start
                ON CONFLICT (app_id, policy, subject, window_start) DO UPDATE SET count = c.count + excluded.count
                RETURNING app_id, policy, subject, window_start, count
            ),
            running AS (
                SELECT i.*, sum(i.increment) OVER (
                    PARTITION BY i.app_id, i.policy, i.subject, i.window_start ORDER BY i.position) AS so_far
                FROM input i
            )
            SELECT coalesce(a.count - t.added + r.so_far, stored.count, 0)::int8, coalesce(before.count, 0)::int8
            FROM running r
            JOIN totals t USING (app_id, policy, subject, window_start)
            LEFT JOIN added a USING (app_id, policy, subject, window_start)
            LEFT JOIN rate_limit_counters stored ON t.added = 0 AND stored.app_id = r.app_id
                AND stored.policy = r.policy AND stored.subject = r.subject AND stored.window_start = r.window_start
            LEFT JOIN rate_limit_counters before ON before.app_id = r.app_id AND before.policy = r.policy
                AND before.subject = r.subject AND before.window_start = r.window_start - r.period
            ORDER BY r.position
            """, logger: logger)
        var counts: [Counts] = []
        for try await (current, previous) in rows.decode((Int64, Int64).self) {
            counts.append(Counts(current: Int(current), previous: Int(previous)))
        }
        var answers: [[Counts]] = []
        var offset = 0
        for request in requests {
            answers.append(Array(counts[offset..<(offset + request.touches.count)]))
            offset += request.touches.count
        }
        return answers
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
