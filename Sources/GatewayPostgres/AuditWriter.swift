import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO
public import ServiceLifecycle
import Synchronization

/// Writes the audit events of token requests with group commit: events of
/// concurrent requests go to Postgres together, in one multi-row INSERT, and
/// each ``record(_:)`` returns only when its batch has committed. Batches
/// are as large as the events waiting while the previous one was written
/// (at most `maximumBatch`), so there is no added delay at low load.
///
/// If a batch cannot be written within `writeTimeout` (Postgres down), its
/// callers, and everyone queued behind them, get 503 `unavailable` at once
/// rather than each waiting out a timeout of their own; a full queue refuses
/// at once. Should such a batch still commit later, the trail holds an
/// `issued` row for a token that was never sent: it may over-report, never
/// under-report.
public final class AuditWriter: Service, Sendable {
    public struct Statistics: Sendable, Equatable {
        public var events = 0
        public var batches = 0
    }

    private struct Pending {
        let event: AuditEvent
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var queue: [Pending] = []
        var wakeup: CheckedContinuation<Void, Never>?
        var stopping = false
        var statistics = Statistics()
    }

    private let client: PostgresClient
    private let logger: Logger
    private let maximumBatch: Int
    private let maximumQueue: Int
    private let writeTimeout: Duration
    private let state = Mutex(State())

    public init(
        client: PostgresClient, logger: Logger, maximumBatch: Int = 500, maximumQueue: Int = 20_000,
        writeTimeout: Duration = .seconds(2)
    ) {
        self.client = client
        self.logger = logger
        self.maximumBatch = maximumBatch
        self.maximumQueue = maximumQueue
        self.writeTimeout = writeTimeout
    }

    /// How many events and batches were written so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Returns once the event is committed; throws 503 `unavailable` when it
    /// cannot be, and the caller must then not act as if it were.
    public func record(_ event: AuditEvent) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let (accepted, wakeup) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                guard !state.stopping, state.queue.count < maximumQueue else { return (false, nil) }
                state.queue.append(Pending(event: event, continuation: continuation))
                defer { state.wakeup = nil }
                return (true, state.wakeup)
            }
            if accepted {
                wakeup?.resume()
            } else {
                continuation.resume(throwing: GatewayError.unavailable)
            }
        }
    }

    /// Writes batches until a graceful shutdown (or cancellation), then
    /// writes what is still queued and returns.
    public func run() async throws {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                while let batch = await nextBatch() {
                    await write(batch)
                }
            } onGracefulShutdown: {
                self.stop()
            }
        } onCancel: {
            self.stop()
        }
        let statistics = self.statistics
        let average = statistics.batches == 0 ? 0 : Double(statistics.events) / Double(statistics.batches)
        logger.info(
            "audit writer stopped",
            metadata: [
                "events": "\(statistics.events)", "batches": "\(statistics.batches)",
                "average_batch": "\(String(format: "%.1f", average))",
            ])
    }

    private func stop() {
        let wakeup = state.withLock { state in
            state.stopping = true
            defer { state.wakeup = nil }
            return state.wakeup
        }
        wakeup?.resume()
    }

    /// The next events to write; `nil` once stopping with nothing left.
    private func nextBatch() async -> [Pending]? {
        while true {
            let batch = state.withLock { state -> [Pending]? in
                guard !state.queue.isEmpty else { return nil }
                let count = min(maximumBatch, state.queue.count)
                let batch = Array(state.queue.prefix(count))
                state.queue.removeFirst(count)
                return batch
            }
            if let batch { return batch }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.queue.isEmpty || state.stopping { return true }
                    state.wakeup = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            if state.withLock({ $0.stopping && $0.queue.isEmpty }) { return nil }
        }
    }

    private func write(_ batch: [Pending]) async {
        let events = batch.map(\.event)
        do {
            try await withTimeout(writeTimeout) { [client, logger] in
                try await Self.insert(events, client: client, logger: logger)
            }
            state.withLock {
                $0.statistics.events += batch.count
                $0.statistics.batches += 1
            }
            for pending in batch { pending.continuation.resume() }
        } catch {
            // The database is away: what queued meanwhile would fail the same way, later.
            let queued = state.withLock { state in
                defer { state.queue.removeAll() }
                return state.queue
            }
            logger.error(
                "audit batch not written",
                metadata: ["events": "\(batch.count + queued.count)", "error": "\(PostgresErrorText.describe(error))"])
            for pending in batch + queued { pending.continuation.resume(throwing: GatewayError.unavailable) }
        }
    }

    private static func insert(_ events: [AuditEvent], client: PostgresClient, logger: Logger) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let details = try events.map { String(decoding: try encoder.encode($0.detail), as: UTF8.self) }
        // NULLs travel as empty strings: none of these columns holds a meaningful empty value.
        func text(_ value: String?) -> String { value ?? "" }
        try await client.query(
            """
            INSERT INTO audit_events (app_id, event, outcome, reason, user_id, credential_type, key_id, client_ip,
                                      user_agent, request_id, actor, detail)
            SELECT app_id, event, outcome, nullif(reason, ''), nullif(user_id, ''), nullif(credential_type, ''),
                   nullif(key_id, '')::uuid, nullif(client_ip, '')::inet, nullif(user_agent, ''), request_id,
                   nullif(actor, '')::uuid, detail::jsonb
            FROM unnest(
                \(events.map { $0.appID?.uuid ?? AuditEvent.noApp })::uuid[], \(events.map(\.event))::text[],
                \(events.map(\.outcome.rawValue))::text[], \(events.map { text($0.reason) })::text[],
                \(events.map { text($0.userID) })::text[], \(events.map { text($0.credentialType) })::text[],
                \(events.map { text($0.keyID.map { $0.uuid.uuidString }) })::text[],
                \(events.map { text($0.clientIP) })::text[], \(events.map { text($0.userAgent) })::text[],
                \(events.map(\.requestID))::text[], \(events.map { text($0.actor?.uuidString) })::text[],
                \(details)::text[]
            ) AS e(app_id, event, outcome, reason, user_id, credential_type, key_id, client_ip, user_agent,
                   request_id, actor, detail)
            """, logger: logger)
    }
}
