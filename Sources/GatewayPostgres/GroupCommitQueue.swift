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
/// A batch that fails or passes `timeout` fails its callers and everyone
/// queued behind them at once with 503 `unavailable` (the database is away;
/// they would fail the same way, later). A full queue refuses at once.
final class GroupCommitQueue<Item: Sendable, Answer: Sendable>: Sendable {
    private struct Pending {
        let item: Item
        let continuation: CheckedContinuation<Delivery, any Error>
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
    }

    private let name: String
    private let logger: Logger
    private let maximumBatch: Int
    private let concurrency: Int
    private let maximumQueue: Int
    private let timeout: Duration
    private let process: @Sendable ([Item]) async throws -> [Answer]
    private let state = Mutex(State())

    /// - Parameter process: handles a batch; returns one answer per item, in order.
    init(
        name: String, logger: Logger, maximumBatch: Int, maximumQueue: Int, timeout: Duration, concurrency: Int = 1,
        process: @escaping @Sendable ([Item]) async throws -> [Answer]
    ) {
        precondition(concurrency >= 1)
        self.name = name
        self.logger = logger
        self.maximumBatch = maximumBatch
        self.concurrency = concurrency
        self.maximumQueue = maximumQueue
        self.timeout = timeout
        self.process = process
    }

    /// Items waiting for a batch.
    var queuedCount: Int { state.withLock { $0.queue.count } }

    /// Items and batches processed so far.
    var counts: (items: Int, batches: Int) { state.withLock { ($0.items, $0.batches) } }

    /// Waits for the batch holding `item` to be processed. In a traced
    /// request, two spans say where the time went: the wait for a batch,
    /// and the batch's statement with its size.
    func submit(_ item: Item) async throws -> Answer {
        let enqueued = Spans.areRecorded ? DefaultTracerClock.now : nil
        let delivery = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Delivery, any Error>) in
            let (accepted, wakeup) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                guard !state.stopping, state.queue.count < maximumQueue else { return (false, nil) }
                state.queue.append(Pending(item: item, continuation: continuation))
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
                                await self.handle(batch)
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
        let items = batch.map(\.item)
        let process = self.process
        let label = String(name.map { $0 == " " ? "_" : $0 })
        Recorder(label: "gateway_batch_size", dimensions: [("queue", label)]).record(batch.count)
        let started = ContinuousClock.now
        let batchStarted = DefaultTracerClock.now
        defer {
            CoreMetrics.Timer(label: "gateway_batch_commit_seconds", dimensions: [("queue", label)])
                .recordNanoseconds((ContinuousClock.now - started).nanoseconds)
        }
        do {
            let answers = try await withTimeout(timeout) { try await process(items) }
            precondition(answers.count == batch.count, "\(name): one answer per item")
            state.withLock {
                $0.items += batch.count
                $0.batches += 1
            }
            for (pending, answer) in zip(batch, answers) {
                pending.continuation.resume(
                    returning: Delivery(answer: answer, batchStarted: batchStarted, batchSize: batch.count))
            }
        } catch {
            let queued = state.withLock { state in
                defer { state.queue.removeAll() }
                return state.queue
            }
            logger.error(
                "\(name) batch failed",
                metadata: ["items": "\(batch.count + queued.count)", "error": "\(PostgresErrorText.describe(error))"])
            for pending in batch + queued { pending.continuation.resume(throwing: GatewayError.unavailable) }
        }
    }
}
