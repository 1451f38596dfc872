import CoreMetrics
import Foundation
import GatewayCore
import Logging
import Synchronization

/// Audit rows that could not be written when they were made (PostgreSQL was
/// away), kept in memory, oldest first, and written once it answers again.
/// Holds at most `capacity` rows; a row past that, or still kept when the
/// gateway stops without reaching PostgreSQL, is counted as lost and logged
/// whole at error level (`audit_row`, one JSON object), so a log pipeline
/// still has it. ``run()`` retries while rows wait, after pauses that grow
/// from a tenth of `retryInterval` to `retryInterval` (``Backoff``).
final class AuditBacklog: Sendable {
    struct Row: Sendable {
        let event: AuditEvent
        /// When the row was made, stored as its `occurred_at`.
        let occurredAt: Date
    }

    private struct State {
        var rows: [Row] = []
        var written = 0
        var lost = 0
    }

    let capacity: Int
    private let maximumBatch: Int
    private let retry: Backoff
    private let logger: Logger
    private let write: @Sendable ([Row]) async throws -> Void
    private let state = Mutex(State())
    private let doorbell: AsyncStream<Void>
    private let ring: AsyncStream<Void>.Continuation
    private let depthGauge = Gauge(label: "gateway_audit_backlog_rows")
    private let lostRowsCounter = Counter(label: "gateway_audit_rows_lost_total")

    /// - Parameter write: writes rows in one statement, skipping any whose
    ///   request already has a row of the same event (its first attempt may
    ///   have committed after the gateway stopped waiting for it).
    init(
        capacity: Int, maximumBatch: Int, retryInterval: Duration, logger: Logger,
        write: @escaping @Sendable ([Row]) async throws -> Void
    ) {
        precondition(capacity >= 1 && maximumBatch >= 1)
        self.capacity = capacity
        self.maximumBatch = maximumBatch
        self.retry = Backoff(first: retryInterval / 10, longest: retryInterval)
        self.logger = logger
        self.write = write
        (doorbell, ring) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Both series exist from the start, so an alert on any loss has a zero to compare with.
        depthGauge.record(0)
        lostRowsCounter.increment(by: 0)
    }

    /// Rows waiting; while any do, new rows join them rather than overtake them.
    var count: Int { state.withLock { $0.rows.count } }

    /// When the oldest row waiting was made; nil when none waits.
    var oldestKeptAt: Date? { state.withLock { $0.rows.first?.occurredAt } }

    /// Rows written from the backlog and rows lost, so far.
    var counts: (written: Int, lost: Int) { state.withLock { ($0.written, $0.lost) } }

    /// Keeps `event` for a later write; when the backlog is full it is lost:
    /// counted, and logged whole.
    func keep(_ event: AuditEvent, occurredAt: Date) {
        let row = Row(event: event, occurredAt: occurredAt)
        let (kept, depth) = state.withLock { state -> (Bool, Int) in
            guard state.rows.count < capacity else {
                state.lost += 1
                return (false, state.rows.count)
            }
            state.rows.append(row)
            return (true, state.rows.count)
        }
        depthGauge.record(depth)
        if kept {
            ring.yield()
        } else {
            lostRowsCounter.increment()
            logLost(row, why: "the backlog of \(capacity) rows is full")
        }
    }

    /// Counts `event` as lost and logs it whole: for a row PostgreSQL refused
    /// even made storable, which keeping would only retry forever.
    func lose(_ event: AuditEvent, occurredAt: Date, why: String) {
        state.withLock { $0.lost += 1 }
        lostRowsCounter.increment()
        logLost(Row(event: event, occurredAt: occurredAt), why: "PostgreSQL refused it even made storable: \(why)")
    }

    /// Writes kept rows whenever there are some, trying again after each
    /// pause of ``retry`` while PostgreSQL fails; returns when cancelled.
    func run() async {
        for await _ in doorbell {
            var failures = 0
            while count > 0 {
                if await writeOldest() {
                    failures = 0
                    continue
                }
                failures += 1
                guard (try? await Task.sleep(for: retry.pause(beforeRetry: failures))) != nil else { return }
            }
        }
    }

    /// One last attempt to write every kept row (at shutdown); logs and
    /// returns how many are lost.
    @discardableResult
    func flush() async -> Int {
        while count > 0 {
            guard await writeOldest() else { break }
        }
        let left = state.withLock { state in
            defer {
                state.lost += state.rows.count
                state.rows.removeAll()
            }
            return state.rows
        }
        if !left.isEmpty {
            lostRowsCounter.increment(by: left.count)
            depthGauge.record(0)
            for row in left { logLost(row, why: "stopping without reaching PostgreSQL") }
        }
        return left.count
    }

    /// Writes `batch`, which PostgreSQL refused for a value, in halves until
    /// the refused rows stand alone (as the group-commit writer does): a
    /// refused row is written once more made storable, and if even that is
    /// refused, logged whole and counted lost, never retried again. Rows
    /// leave the backlog, oldest first, as they are written. False when
    /// PostgreSQL stopped answering on the way (the rest wait).
    private func writeSplitting(_ batch: ArraySlice<Row>) async -> Bool {
        guard batch.count > 1 else { return await writeRefused(batch[batch.startIndex]) }
        let middle = batch.startIndex + batch.count / 2
        for half in [batch[..<middle], batch[middle...]] {
            do {
                try await write(Array(half))
                removeWritten(half.count)
            } catch where UnstorableRow.isDataError(error) {
                guard await writeSplitting(half) else { return false }
            } catch {
                return false
            }
        }
        return true
    }

    /// The oldest row, which PostgreSQL refused on its own: written made
    /// storable, or counted lost. False when PostgreSQL stopped answering.
    private func writeRefused(_ row: Row) async -> Bool {
        do {
            try await write([Row(event: row.event.storable, occurredAt: row.occurredAt)])
            UnstorableRow.escapedRowsCounter.increment()
            logger.error(
                "audit row refused by PostgreSQL; written with its text made storable",
                metadata: ["audit_row": "\(Self.json(row))"])
        } catch where UnstorableRow.isDataError(error) {
            lose(row.event, occurredAt: row.occurredAt, why: PostgresErrorText.describe(error))
        } catch {
            return false
        }
        removeWritten(1)
        return true
    }

    /// Takes the `count` oldest rows out, written.
    private func removeWritten(_ count: Int) {
        let depth = state.withLock { state in
            state.rows.removeFirst(count)
            state.written += count
            return state.rows.count
        }
        depthGauge.record(depth)
    }

    private func logLost(_ row: Row, why: String) {
        logger.error(
            "audit row lost; logged whole instead", metadata: ["why": "\(why)", "audit_row": "\(Self.json(row))"])
    }

    /// The row as one JSON object with the audit trail's column names.
    static func json(_ row: Row) -> String {
        let event = row.event
        var writer = JSONObjectWriter(reservingCapacity: 512)
        writer.add("occurred_at", row.occurredAt.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        writer.add("app_id", (event.appID?.uuid ?? AuditEvent.noApp).lowercasedText)
        writer.add("event", event.event)
        writer.add("outcome", event.outcome.rawValue)
        let optional: [(String, String?)] = [
            ("reason", event.reason), ("user_id", event.userID), ("credential_type", event.credentialType),
            ("key_id", event.keyID?.uuid.lowercasedText), ("client_ip", event.clientIP), ("user_agent", event.userAgent),
            ("request_id", event.requestID), ("actor", event.actor?.lowercasedText),
        ]
        for (name, value) in optional {
            if let value { writer.add(name, value) }
        }
        var bytes = writer.finish()
        bytes.removeLast()
        bytes.append(contentsOf: #","detail":"#.utf8)
        bytes.append(contentsOf: LedgerWriteStatement.detailJSON(event.detail).utf8)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes up to `maximumBatch` of the oldest rows; false when that failed.
    private func writeOldest() async -> Bool {
        // Only this backlog's one writer removes rows, so the prefix is still there afterwards.
        let batch = state.withLock { Array($0.rows.prefix(maximumBatch)) }
        do {
            try await write(batch)
        } catch where UnstorableRow.isDataError(error) {
            // A value PostgreSQL refuses would hold every later row back, and be retried forever.
            return await writeSplitting(batch[...])
        } catch {
            logger.warning(
                "kept audit rows not written yet",
                metadata: ["rows": "\(count)", "error": "\(PostgresErrorText.describe(error))"])
            return false
        }
        removeWritten(batch.count)
        logger.info("kept audit rows written", metadata: ["rows": "\(batch.count)", "still_kept": "\(count)"])
        return true
    }
}
