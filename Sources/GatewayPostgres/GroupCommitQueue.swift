import CoreMetrics
import GatewayCore
import Logging
import ServiceLifecycle
import Synchronization
import Tracing

/// Group commit: callers submit items and wait; `concurrency` loops each hand
/// everything waiting (up to `maximumBatch`) to `process` in one go, and
/// answer each caller with its own result. A batch holds what queued while
/// the loops were busy, so there is no added delay at low load and few round
/// trips at high load; several loops keep the database busy while one batch
/// is on the wire or waiting for its commit.
///
/// A batch that fails with a failure worth waiting out (`isTransient`: the
/// database failing over, a connection cut, an attempt past `timeout`) is
/// tried again, with a short pause that grows to half a second, for as long
/// as its items may wait: each was submitted with a retry window, and an
/// item whose window has passed is answered 503 `unavailable` at the next
/// failure, as is every item of a batch that fails otherwise. `process` is
/// told which attempt it makes, so a retry can be made harmless where the
/// first attempt's fate is unknown. Items queued meanwhile wait their turn;
/// those whose window passed while they waited are answered 503 at once. A
/// full queue refuses at once.
///
/// With a `minimumInterval`, a loop starts its next batch no sooner than that
/// after it started the last one: under load fewer, larger batches (each
/// costs the database about the same whatever its size), and no wait at all
/// for an item that comes after a quiet spell.
final class GroupCommitQueue<Item: Sendable, Answer: Sendable>: Sendable {
    private struct Pending {
        let item: Item
        let continuation: CheckedContinuation<Delivery, any Error>
        /// Until when a failed batch holding it is tried again.
        let retryUntil: ContinuousClock.Instant
    }

    /// An answer, and when and with how many others its batch went to the database.
    private struct Delivery {
        let answer: Answer
        let batchStarted: DefaultTracerClock.Instant
        let batchSize: Int
    }

    private struct State {
        var queue: [Pending] = []
        /// Loops waiting for work.
        var idle: [CheckedContinuation<Void, Never>] = []
        var stopping = false
        var items = 0
        var batches = 0
        /// Attempts made again after a failure worth waiting out.
        var retries = 0
    }

    private let name: String
    private let logger: Logger
    private let maximumBatch: Int
    private let concurrency: Int
    private let maximumQueue: Int
    private let timeout: Duration
    private let minimumInterval: Duration
    private let isTransient: @Sendable (any Error) -> Bool
    private let process: @Sendable (_ items: [Item], _ attempt: Int) async throws -> [Answer]
    private let state = Mutex(State())
    /// `gateway_batch_size` and `gateway_batch_commit_seconds`, made once: through the factory they cost a lock and a lookup a batch.
    private let batchSizes: Recorder
    private let commitSeconds: CoreMetrics.Timer

    /// - Parameters:
    ///   - timeout: how long one attempt at a batch may take.
    ///   - minimumInterval: the least time from one batch's start to the next one's, per loop.
    ///   - isTransient: whether a failure is worth waiting out (a passed `timeout` always is).
    ///   - process: handles a batch, its `attempt`th time (0 the first);
    ///     returns one answer per item, in order.
    init(
        name: String, logger: Logger, maximumBatch: Int, maximumQueue: Int, timeout: Duration, minimumInterval: Duration = .zero,
        concurrency: Int = 1, isTransient: @escaping @Sendable (any Error) -> Bool = { _ in false },
        process: @escaping @Sendable (_ items: [Item], _ attempt: Int) async throws -> [Answer]
    ) {
        precondition(concurrency >= 1)
        self.name = name
        self.logger = logger
        self.maximumBatch = maximumBatch
        self.concurrency = concurrency
        self.maximumQueue = maximumQueue
        self.timeout = timeout
        self.minimumInterval = minimumInterval
        self.isTransient = isTransient
        self.process = process
        let label = String(name.map { $0 == " " ? "_" : $0 })
        batchSizes = Recorder(label: "gateway_batch_size", dimensions: [("queue", label)])
        commitSeconds = CoreMetrics.Timer(label: "gateway_batch_commit_seconds", dimensions: [("queue", label)])
    }

    /// Items waiting for a batch.
    var queuedCount: Int { state.withLock { $0.queue.count } }

    /// Items and batches processed so far, and the attempts made again.
    var counts: (items: Int, batches: Int, retries: Int) { state.withLock { ($0.items, $0.batches, $0.retries) } }

    /// Waits for the batch holding `item` to be processed: its first
    /// attempt, and the retries of a transient failure within `retryWindow`
    /// of now (zero: none). In a traced request, two spans say where the
    /// time went: the wait for a batch, and the batch's statement with its size.
    func submit(_ item: Item, retryWindow: Duration = .zero) async throws -> Answer {
        let enqueued = Spans.areRecorded ? DefaultTracerClock.now : nil
        let retryUntil = ContinuousClock.now + retryWindow
        let delivery = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Delivery, any Error>) in
            let (accepted, wakeup) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                guard !state.stopping, state.queue.count < maximumQueue else { return (false, nil) }
                state.queue.append(Pending(item: item, continuation: continuation, retryUntil: retryUntil))
                return (true, state.idle.popLast())
            }
            if accepted {
                wakeup?.resume()
            } else {
                continuation.resume(throwing: GatewayError.unavailable)
            }
        }
        if let enqueued {
            Spans.record("\(name) wait", from: enqueued, to: delivery.batchStarted)
            Spans.record(
                "\(name) batch", kind: .client, from: delivery.batchStarted, to: DefaultTracerClock.now,
                attributes: [
                    "db.system.name": "postgresql", "db.operation.name": .string(name),
                    "db.operation.batch.size": .int64(Int64(delivery.batchSize)),
                ])
        }
        return delivery.answer
    }

    /// Processes batches until a graceful shutdown or cancellation, then
    /// processes what is still queued and returns.
    func run() async {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withDiscardingTaskGroup { group in
                    for _ in 0..<concurrency {
                        group.addTask {
                            while let batch = await self.nextBatch() {
                                let started = ContinuousClock.now
                                await self.handle(batch)
                                await self.pause(untilIntervalSince: started)
                            }
                        }
                    }
                }
            } onGracefulShutdown: {
                self.stop()
            }
        } onCancel: {
            self.stop()
        }
    }

    /// Waits out what is left of ``minimumInterval`` since `started`, unless stopping.
    private func pause(untilIntervalSince started: ContinuousClock.Instant) async {
        guard minimumInterval > .zero, !state.withLock({ $0.stopping }) else { return }
        let next = started + minimumInterval
        if next > ContinuousClock.now { try? await Task.sleep(until: next, clock: .continuous) }
    }

    private func stop() {
        let idle = state.withLock { state in
            state.stopping = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        for loop in idle { loop.resume() }
    }

    /// The next items to process; `nil` once stopping with nothing left.
    private func nextBatch() async -> [Pending]? {
        while true {
            let (batch, finished) = state.withLock { state -> ([Pending]?, Bool) in
                guard !state.queue.isEmpty else { return (nil, state.stopping) }
                let count = min(maximumBatch, state.queue.count)
                defer { state.queue.removeFirst(count) }
                return (Array(state.queue.prefix(count)), false)
            }
            if let batch { return batch }
            if finished { return nil }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.queue.isEmpty || state.stopping { return true }
                    state.idle.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    private func handle(_ batch: [Pending]) async {
        let process = self.process
        batchSizes.record(batch.count)
        let started = ContinuousClock.now
        let batchStarted = DefaultTracerClock.now
        defer { commitSeconds.recordNanoseconds((ContinuousClock.now - started).nanoseconds) }
        var pending = batch
        for attempt in 0... {
            let pause = Backoff.database.pause(beforeRetry: attempt + 1)
            let items = pending.map(\.item)
            do {
                let answers = try await withTimeout(timeout) { try await process(items, attempt) }
                precondition(answers.count == pending.count, "\(name): one answer per item")
                state.withLock {
                    $0.items += pending.count
                    $0.batches += 1
                }
                if attempt > 0 {
                    logger.notice(
                        "\(name) batch written after retrying", metadata: ["items": "\(pending.count)", "attempts": "\(attempt + 1)"])
                }
                for (item, answer) in zip(pending, answers) {
                    item.continuation.resume(
                        returning: Delivery(answer: answer, batchStarted: batchStarted, batchSize: pending.count))
                }
                return
            } catch {
                let now = ContinuousClock.now
                let transient = error is TimeoutError || isTransient(error)
                // Items that may wait longer are tried again after a pause; the others are answered now.
                let retried = transient ? pending.filter { $0.retryUntil > now + pause } : []
                let failed = transient ? pending.filter { $0.retryUntil <= now + pause } : pending
                let expiredInQueue = state.withLock { state -> [Pending] in
                    let expired = state.queue.filter { $0.retryUntil <= now }
                    state.queue.removeAll { $0.retryUntil <= now }
                    return expired
                }
                if attempt == 0 || retried.isEmpty {
                    logger.error(
                        "\(name) batch failed",
                        metadata: [
                            "items": "\(pending.count)", "retried": "\(retried.count)",
                            "failed": "\(failed.count + expiredInQueue.count)", "attempt": "\(attempt + 1)",
                            "error": "\(PostgresErrorText.describe(error))",
                        ])
                }
                for item in failed + expiredInQueue { item.continuation.resume(throwing: GatewayError.unavailable) }
                guard !retried.isEmpty else { return }
                state.withLock { $0.retries += 1 }
                pending = retried
                try? await Task.sleep(for: pause)
            }
        }
    }
}
