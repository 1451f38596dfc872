import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// What token requests write to Postgres: rate-limit counter touches and
/// audit rows, with group commit (see ``GroupCommitQueue``). Whatever
/// concurrent requests submit while one batch runs goes into the next, and a
/// batch is one prepared statement (``AuditAndCounterWrite``) holding both
/// kinds, so a token costs a share of two batches, not two statements of its
/// own. Each call returns only once its batch has committed. Run it as a
/// service.
///
/// Should a batch that timed out still commit later, the trail holds an
/// `issued` row for a token that was never sent: it may over-report, never
/// under-report.
public final class GroupCommitWriter: Service, Sendable {
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

    /// A counter after a touch: the current window (including the increment) and the previous window.
    public struct Counts: Sendable, Equatable {
        public let current: Int
        public let previous: Int
    }

    public struct Statistics: Sendable, Equatable {
        /// Audit events written.
        public var events = 0
        /// Counter touches (one per request, whatever its number of counters).
        public var touches = 0
        /// Statements run.
        public var batches = 0
    }

    private enum Work: Sendable {
        case touch(AppID, [Touch])
        case audit(AuditEvent)
    }

    private let queue: GroupCommitQueue<Work, [Counts]>
    /// Audit events committed so far; the queue counts all items.
    private let committedEvents = Atomic(0)
    private let writesAudit: Bool
    private let logger: Logger

    /// - Parameters:
    ///   - concurrency: batches in flight at once, each on its own connection.
    ///   - writesAudit: `false` drops audit events and returns at once. Only
    ///     for measuring what the audit trail costs; never in production.
    public init(
        client: PostgresClient, logger: Logger, timeout: Duration = .seconds(2), maximumBatch: Int = 500,
        maximumQueue: Int = 20_000, concurrency: Int = 2, writesAudit: Bool = true
    ) {
        self.writesAudit = writesAudit
        self.logger = logger
        self.queue = GroupCommitQueue(
            name: "group commit", logger: logger, maximumBatch: maximumBatch, maximumQueue: maximumQueue,
            timeout: timeout, concurrency: concurrency
        ) { work in
            try await Self.write(work, client: client, logger: logger)
        }
    }

    public var statistics: Statistics {
        let counts = queue.counts
        let events = committedEvents.load(ordering: .relaxed)
        return Statistics(events: events, touches: counts.items - events, batches: counts.batches)
    }

    /// Returns once the event is committed; throws 503 `unavailable` when it
    /// cannot be, and the caller must then not act as if it were.
    public func record(_ event: AuditEvent) async throws {
        guard writesAudit else { return }
        _ = try await queue.submit(.audit(event))
        committedEvents.add(1, ordering: .relaxed)
    }

    /// Adds the increments and reads every counter; the answer is in the order of `touches`.
    public func touch(_ touches: [Touch], appID: AppID) async throws -> [Counts] {
        guard !touches.isEmpty else { return [] }
        return try await queue.submit(.touch(appID, touches))
    }

    public func run() async throws {
        await queue.run()
        let statistics = self.statistics
        let items = statistics.events + statistics.touches
        logger.info(
            "group-commit writer stopped",
            metadata: [
                "audit_events": "\(statistics.events)", "counter_touches": "\(statistics.touches)",
                "batches": "\(statistics.batches)",
                "average_batch": "\(String(format: "%.1f", statistics.batches == 0 ? 0 : Double(items) / Double(statistics.batches)))",
            ])
    }

    /// Runs one batch; returns each item's answer, in order.
    private static func write(_ work: [Work], client: PostgresClient, logger: Logger) async throws -> [[Counts]] {
        var statement = AuditAndCounterWrite()
        for item in work {
            switch item {
            case .audit(let event):
                statement.events.append(event)
            case .touch(let appID, let touches):
                for touch in touches {
                    statement.touches.append(
                        .init(
                            appID: appID, policy: touch.window.policy.name, subject: touch.subject,
                            windowStart: touch.window.windowStart, periodSeconds: Int64(touch.window.policy.periodSeconds),
                            increment: Int64(touch.increment)))
                }
            }
        }
        var counts: [Counts] = []
        counts.reserveCapacity(statement.touches.count)
        for try await (current, previous) in try await client.execute(statement, logger: logger) {
            counts.append(Counts(current: Int(current), previous: Int(previous)))
        }
        var answers: [[Counts]] = []
        answers.reserveCapacity(work.count)
        var offset = 0
        for item in work {
            switch item {
            case .audit:
                answers.append([])
            case .touch(_, let touches):
                answers.append(Array(counts[offset..<(offset + touches.count)]))
                offset += touches.count
            }
        }
        return answers
    }
}
