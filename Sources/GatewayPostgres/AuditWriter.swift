import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO
public import ServiceLifecycle

/// Writes the audit events of token requests with group commit (see
/// ``GroupCommitQueue``): events of concurrent requests go to Postgres in one
/// multi-row INSERT, and each ``record(_:)`` returns only once its batch has
/// committed. Should a batch that timed out still commit later, the trail
/// holds an `issued` row for a token that was never sent: it may over-report,
/// never under-report.
public final class AuditWriter: Service, Sendable {
    public struct Statistics: Sendable, Equatable {
        public var events = 0
        public var batches = 0
    }

    private let queue: GroupCommitQueue<AuditEvent, Void>
    private let discards: Bool
    private let logger: Logger

    /// - Parameter discards: write nothing and return at once. Only for
    ///   measuring what the audit trail costs; never in production.
    public init(
        client: PostgresClient, logger: Logger, maximumBatch: Int = 500, maximumQueue: Int = 20_000,
        writeTimeout: Duration = .seconds(2), discards: Bool = false
    ) {
        self.discards = discards
        self.logger = logger
        self.queue = GroupCommitQueue(
            name: "audit", logger: logger, maximumBatch: maximumBatch, maximumQueue: maximumQueue,
            timeout: writeTimeout
        ) { events in
            try await client.query(try PostgresAuditLog.insertQuery(events), logger: logger)
            return Array(repeating: (), count: events.count)
        }
    }

    /// How many events and batches were written so far.
    public var statistics: Statistics {
        let counts = queue.counts
        return Statistics(events: counts.items, batches: counts.batches)
    }

    /// Returns once the event is committed; throws 503 `unavailable` when it
    /// cannot be, and the caller must then not act as if it were.
    public func record(_ event: AuditEvent) async throws {
        guard !discards else { return }
        try await queue.submit(event)
    }

    public func run() async throws {
        await queue.run()
        let statistics = self.statistics
        let average = statistics.batches == 0 ? 0 : Double(statistics.events) / Double(statistics.batches)
        logger.info(
            "audit writer stopped",
            metadata: [
                "events": "\(statistics.events)", "batches": "\(statistics.batches)",
                "average_batch": "\(String(format: "%.1f", average))",
            ])
    }
}
