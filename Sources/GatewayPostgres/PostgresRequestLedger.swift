import CoreMetrics
import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// The ``RequestLedger`` in PostgreSQL: rate-limit counter touches and
/// audit rows, with group commit (see ``GroupCommitQueue``). Whatever
/// concurrent requests submit while one batch runs goes into the next, and a
/// batch is one prepared statement (``LedgerWriteStatement``) holding both
/// kinds. A token whose credential was verified before its limits were
/// counted costs a share of one batch (``countAndRecord(_:ifAllowed:changing:)``);
/// otherwise a share of two (``count(_:)`` before the credential,
/// ``record(_:)`` after). Each call returns only once its batch has
/// committed. Run it as a service.
///
/// Rows whose request is answered whatever becomes of them (denials, codes
/// already sent) go through ``recordEventually(_:)``: while PostgreSQL is away
/// they are kept in memory (``AuditBacklog``) and written once it is back.
///
/// Should a batch that timed out still commit later, the trail holds an
/// `issued` row for a token that was never sent: it may over-report, never
/// under-report. That request's 503 also leaves a `token.denied` row
/// (reason `unavailable`) with the same request id.
public final class PostgresRequestLedger: RequestLedger, Service, Sendable {
    public struct Statistics: Sendable, Equatable {
        /// Audit events written.
        public var events = 0
        /// Counter touches (one per request, whatever its number of counters).
        public var touches = 0
        /// Touches that carried their request's audit event: counted among the
        /// touches, and among the events when admitted.
        public var admissions = 0
        /// Statements run.
        public var batches = 0
        /// Batches tried again after a failure worth waiting out (a cut connection, a failover).
        public var retries = 0
        /// Rows written late from the backlog, and rows it lost (full, or still kept at shutdown).
        public var keptAndWritten = 0
        public var lost = 0
    }

    /// One queued item. `write` is its own id, the same on every attempt at
    /// its batch: what a retry asks of a row to know this item's earlier
    /// attempt wrote it (``LedgerWriteStatement/notWrittenBefore``).
    private enum Work: Sendable, CustomStringConvertible {
        case audit(AuditEvent, write: UUID = UUID())
        /// Touches, and an event recorded only if they all allow (`nil`: only
        /// the touches), and a session change made with it.
        case touch([CounterTouch], recording: AuditEvent?, session: SessionChange?, write: UUID = UUID())

        /// The same work with its audit row made storable; nil when it has no row.
        var storable: Work? {
            switch self {
            case .audit(let event, let write): .audit(event.storable, write: write)
            case .touch(let touches, let event?, let session, let write):
                .touch(touches, recording: event.storable, session: session, write: write)
            case .touch(_, nil, _, _): nil
            }
        }

        /// The audit row as one JSON object, for the log.
        var description: String {
            switch self {
            case .audit(let event, _), .touch(_, let event?, _, _): AuditBacklog.json(.init(event: event, occurredAt: Date()))
            case .touch(let touches, nil, _, _): "\(touches.count) counter touches"
            }
        }
    }

    private let queue: GroupCommitQueue<Work, Result<Admission, any Error>>
    private let backlog: AuditBacklog
    private let committedEvents = Atomic(0)
    private let committedTouches = Atomic(0)
    private let committedAdmissions = Atomic(0)
    private let writesAudit: Bool
    private let retryWindow: Duration
    private let logger: Logger

    /// - Parameters:
    ///   - concurrency: batches in flight at once, each on its own connection.
    ///     One: a second batch in flight halves the batches, so PostgreSQL's
    ///     CPU a token rises by half, and serves no more tokens, even when it
    ///     overlaps only the first's commit (measured in docs/performance-journal.md,
    ///     "2026-12-07 14:00"); a batch touching a counter row another has
    ///     touched would wait for that one's commit anyway. One batch keeps up
    ///     as long as signatures stay off the cooperative pool
    ///     (`SigningThreads` in GatewayHTTP), so its loop resumes as soon as
    ///     the commit answers.
    ///   - commitInterval: the least time from one batch's start to the next
    ///     one's (``GroupCommitQueue``'s `minimumInterval`); zero: a batch
    ///     starts as soon as the last one committed.
    ///   - writesAudit: `false` drops audit events and returns at once. Only
    ///     for measuring what the audit trail costs; never in production.
    ///   - backlogCapacity: rows ``recordEventually(_:)`` keeps in memory while
    ///     PostgreSQL is away; `backlogRetry` is how often it tries them.
    ///   - timeout: how long one attempt at a batch may take; `retryWindow`,
    ///     how long a request's write is tried again after a failure worth
    ///     waiting out (``TransientFailure``: a failover), before it is
    ///     answered 503. A retry is made harmless for a first attempt whose
    ///     fate is unknown (``LedgerWriteStatement``'s retry form).
    public init(
        client: PostgresClient, logger: Logger, timeout: Duration = .seconds(2), retryWindow: Duration = .zero,
        maximumBatch: Int = 500, maximumQueue: Int = 20_000, concurrency: Int = 1, commitInterval: Duration = .zero, writesAudit: Bool = true,
        backlogCapacity: Int = 10_000, backlogRetry: Duration = .seconds(1)
    ) {
        self.writesAudit = writesAudit
        self.logger = logger
        self.retryWindow = retryWindow
        self.queue = GroupCommitQueue(
            name: "group commit", logger: logger, maximumBatch: maximumBatch, maximumQueue: maximumQueue,
            timeout: timeout, minimumInterval: commitInterval, concurrency: concurrency, isTransient: TransientFailure.isTransient
        ) { work, attempt in
            try await Self.write(work, retrying: attempt > 0, client: client, logger: logger)
        }
        self.backlog = AuditBacklog(
            capacity: backlogCapacity, maximumBatch: maximumBatch, retryInterval: backlogRetry, logger: logger
        ) { rows in
            try await withTimeout(timeout) {
                try await KeptAuditRowsWrite.run(rows, client: client, statementTimeout: timeout, logger: logger)
            }
        }
    }

    public var statistics: Statistics {
        let kept = backlog.counts
        return Statistics(
            events: committedEvents.load(ordering: .relaxed), touches: committedTouches.load(ordering: .relaxed),
            admissions: committedAdmissions.load(ordering: .relaxed), batches: queue.counts.batches, retries: queue.counts.retries,
            keptAndWritten: kept.written, lost: kept.lost)
    }

    /// Items submitted and waiting for a batch.
    public var queuedCount: Int { queue.queuedCount }

    /// Rows kept in memory, waiting for PostgreSQL.
    public var keptCount: Int { backlog.count }

    /// How long the oldest row kept in memory has waited; nil when none waits.
    public var oldestKeptRowAge: Duration? {
        backlog.oldestKeptAt.map { .milliseconds(Int64(max(0, Date().timeIntervalSince($0)) * 1000)) }
    }

    public func record(_ event: AuditEvent) async throws {
        guard writesAudit else { return }
        _ = try await queue.submit(.audit(event), retryWindow: retryWindow).get()
        committedEvents.add(1, ordering: .relaxed)
    }

    /// Kept in memory (with the event's time) when it cannot be written, or
    /// when rows already wait; a row the full backlog cannot take is counted
    /// as lost.
    public func recordEventually(_ event: AuditEvent) async {
        guard writesAudit else { return }
        let occurredAt = Date()
        if backlog.count == 0 {
            do {
                _ = try await queue.submit(.audit(event)).get()
                committedEvents.add(1, ordering: .relaxed)
                return
            } catch where UnstorableRow.isDataError(error) {
                // Refused even made storable (logged by write): keeping it would only repeat that.
                backlog.lose(event, occurredAt: occurredAt, why: PostgresErrorText.describe(error))
                return
            } catch {
                // Kept below; the batch's failure is logged by the queue.
            }
        }
        backlog.keep(event, occurredAt: occurredAt)
    }

    public func count(_ touches: [CounterTouch]) async throws -> [CounterReading] {
        guard !touches.isEmpty else { return [] }
        let counts = try await queue.submit(.touch(touches, recording: nil, session: nil), retryWindow: retryWindow).get().counts
        committedTouches.add(1, ordering: .relaxed)
        return counts
    }

    /// One statement. Without audit (`writesAudit` false) only the verdicts
    /// and the session change are made.
    public func countAndRecord(
        _ touches: [CounterTouch], ifAllowed event: AuditEvent, changing session: SessionChange?
    ) async throws -> Admission {
        let admission = try await queue.submit(
            .touch(touches, recording: writesAudit ? event : nil, session: session), retryWindow: retryWindow
        ).get()
        committedTouches.add(1, ordering: .relaxed)
        committedAdmissions.add(1, ordering: .relaxed)
        if admission.admitted && writesAudit { committedEvents.add(1, ordering: .relaxed) }
        return admission
    }

    public func run() async throws {
        // The backlog retries while the queue runs; once the queue has drained
        // at shutdown, kept rows get one last attempt.
        await withDiscardingTaskGroup { group in
            group.addTask { await self.backlog.run() }
            await queue.run()
            group.cancelAll()
        }
        await backlog.flush()
        let statistics = self.statistics
        let items = queue.counts.items
        logger.info(
            "group-commit writer stopped",
            metadata: [
                "audit_events": "\(statistics.events)", "counter_touches": "\(statistics.touches)",
                "batches": "\(statistics.batches)", "kept_rows_written": "\(statistics.keptAndWritten)",
                "audit_rows_lost": "\(statistics.lost)",
                "average_batch": "\(String(format: "%.1f", statistics.batches == 0 ? 0 : Double(items) / Double(statistics.batches)))",
            ])
    }

    /// Runs one batch; returns each item's answer, in order. Should
    /// PostgreSQL refuse a value (``UnstorableRow``), the batch is split in
    /// halves until the refused items stand alone, so only they fail (a few
    /// statements for one bad row, not one a row); a refused audit row is
    /// tried once more made storable.
    ///
    /// `retrying`: an earlier attempt at this batch failed and may have
    /// committed all the same (its answer lost with its connection), so this
    /// one is made harmless should it have: releases become reads (units
    /// given back twice would let more through; kept, they only refuse early),
    /// an audit row already written for its request and event is not written
    /// again, nor a session already started; counts and reservations made
    /// twice only refuse early, and a rotation already made is not made again.
    private static func write(
        _ work: [Work], retrying: Bool, client: PostgresClient, logger: Logger
    ) async throws -> [Result<Admission, any Error>] {
        do {
            return try await writeBatch(work, retrying: retrying, client: client, logger: logger).map { .success($0) }
        } catch where UnstorableRow.isDataError(error) {
            return await writeSplitting(work, retrying: retrying, refusedWith: error, client: client, logger: logger)
        }
    }

    /// Writes `work`, which PostgreSQL refused as one statement, in halves.
    private static func writeSplitting(
        _ work: [Work], retrying: Bool, refusedWith refusal: any Error, client: PostgresClient, logger: Logger
    ) async -> [Result<Admission, any Error>] {
        guard work.count > 1 else {
            return await writeAlone(work[0], retrying: retrying, refusedWith: refusal, client: client, logger: logger)
        }
        var answers: [Result<Admission, any Error>] = []
        for half in [Array(work[..<(work.count / 2)]), Array(work[(work.count / 2)...])] {
            do {
                answers += try await writeBatch(half, retrying: retrying, client: client, logger: logger).map { .success($0) }
            } catch where UnstorableRow.isDataError(error) {
                answers += await writeSplitting(half, retrying: retrying, refusedWith: error, client: client, logger: logger)
            } catch {
                answers += half.map { _ in .failure(error) }
            }
        }
        return answers
    }

    /// One item PostgreSQL refused: its audit row once more, made storable.
    private static func writeAlone(
        _ item: Work, retrying: Bool, refusedWith refusal: any Error, client: PostgresClient, logger: Logger
    ) async -> [Result<Admission, any Error>] {
        guard let storable = item.storable else { return [.failure(refusal)] }
        UnstorableRow.escapedRowsCounter.increment()
        logger.error(
            "audit row refused by PostgreSQL; writing it with its text made storable",
            metadata: ["error": "\(PostgresErrorText.describe(refusal))", "audit_row": "\(item.description)"])
        do {
            return [.success(try await writeBatch([storable], retrying: retrying, client: client, logger: logger)[0])]
        } catch {
            return [.failure(error)]
        }
    }

    /// Runs one batch as one statement; returns each item's answer, in order.
    private static func writeBatch(
        _ work: [Work], retrying: Bool, client: PostgresClient, logger: Logger
    ) async throws -> [Admission] {
        var statement = LedgerWriteStatement()
        for (index, item) in work.enumerated() {
            switch item {
            case .audit(let event, let write):
                statement.rows.append(.init(event: event, admittedBy: 0, writeID: write))
            case .touch(let touches, let event, let session, let write):
                // The touches, the event and the session change name their request by its place in the batch, from 1.
                let request = Int64(index + 1)
                statement.touches.append(
                    contentsOf: touches.map { counterTouch(retrying && $0.mode == .release ? $0.asRead : $0, request: request) })
                if let session { statement.sessions.append(.init(change: session, request: request)) }
                if let event {
                    var row = LedgerWriteStatement.AuditRow(event: event, admittedBy: request, writeID: write)
                    if case .rotate? = session { row.needsRotation = true }
                    if case .revoke? = session { row = .init(event: event, admittedBy: 0, writeID: write) }
                    statement.rows.append(row)
                }
            }
        }
        // Committed before a verdict is read: an admission is a promise that its row and counts are stored.
        // Each attempt locks its rows' requests (RequestLocks' keys) before it writes and holds them to its
        // end: an attempt that timed out is not over (its commit may still be on its way), and a retry beside
        // it would not see what it commits. A first attempt is one statement that takes the locks itself, in
        // PostgreSQL's implicit transaction, and a confirmation of its commit: two round trips. A retry looks
        // for an earlier attempt's rows after the locks, so its snapshot must come after them: BEGIN, the
        // locks, its statement, COMMIT.
        // Once it holds a connection, an attempt runs to its end even when its waiter has gone (`withTimeout`
        // cancels it): a cancellation landing in the rows' iteration would roll it back, and one landing after
        // them would not, so whether a withheld token's row commits late would be chance. Unstructured, the
        // statements are not cancelled; a wait for a connection still is.
        let requestIDs = statement.rows.map(\.event.requestID)
        let written = statement
        let rows =
            retrying
            ? try await client.transaction(logger: logger) { connection in
                try await Task {
                    if !requestIDs.isEmpty {
                        try await connection.tracedExecute(RequestLocks(requestIDs: requestIDs), logger: logger)
                    }
                    return try await connection.tracedExecute(LedgerWriteStatement.Retry(written), logger: logger)
                }.value
            }
            : try await client.withConnection { connection in
                try await Task { try await connection.committedExecute(written, logger: logger) }.value
            }
        var counts: [CounterReading] = []
        counts.reserveCapacity(statement.touches.count)
        var changed: Set<Int64> = []
        for (kind, request, current, previous, allowed, granted) in rows {
            if kind == 0 {
                counts.append(CounterReading(current: Int(current), previous: Int(previous), allowed: allowed, granted: Int(granted)))
            } else {
                changed.insert(request)
            }
        }
        // An answer short of a row per touch fails the batch; it must never be read as verdicts.
        guard counts.count == statement.touches.count else {
            throw IncompleteAnswer(expected: statement.touches.count, received: counts.count)
        }
        var answers: [Admission] = []
        answers.reserveCapacity(work.count)
        var offset = 0
        for (index, item) in work.enumerated() {
            switch item {
            case .audit:
                answers.append(Admission(counts: [], admitted: true))
            case .touch(let touches, _, let session, _):
                let range = offset..<(offset + touches.count)
                let allowed = counts[range].allSatisfy(\.allowed)
                offset += touches.count
                let sessionChanged: Bool
                switch session {
                case nil: sessionChanged = false
                case .start?: sessionChanged = allowed
                case .rotate?, .revoke?: sessionChanged = changed.contains(Int64(index + 1))
                }
                let admitted: Bool
                switch session {
                case .rotate?: admitted = allowed && sessionChanged
                case .revoke?: admitted = true
                case .start?, nil: admitted = allowed
                }
                answers.append(Admission(counts: Array(counts[range]), admitted: admitted, sessionChanged: sessionChanged))
            }
        }
        return answers
    }

    /// PostgreSQL's answer to a batch ended before every touch had its row.
    struct IncompleteAnswer: Error, CustomStringConvertible {
        let expected: Int
        let received: Int
        var description: String { "the batch's answer ended after \(received) of \(expected) counter rows" }
    }

    private static func counterTouch(_ touch: CounterTouch, request: Int64) -> LedgerWriteStatement.TouchRow {
        LedgerWriteStatement.TouchRow(
            appID: touch.appID, policy: touch.window.policy.name, subject: touch.subject,
            windowStart: touch.window.windowStart, periodSeconds: Int64(touch.window.policy.periodSeconds),
            mode: touch.mode, request: request, previousWeight: touch.window.previousWeight,
            limit: touch.window.limit, units: Int32(touch.units))
    }
}
