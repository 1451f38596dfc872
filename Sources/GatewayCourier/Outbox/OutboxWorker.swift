import CoreMetrics
public import GatewayCore
public import Logging

/// Delivers one channel's queued messages, on every replica: takes the
/// lease of a batch of due messages (``OutboxStore/claim(channel:limit:lease:)``),
/// delivers them at once through the channel's sender, and finishes each
/// with its audit row: delivered, tried again after a pause that doubles
/// (a 4xx reply, no connection, a timeout), or failed (a 5xx reply, the
/// last attempt, a message whose code has expired). Counted in
/// `gateway_outbox_deliveries_total{channel, outcome}`.
public struct OutboxWorker: Sendable {
    public struct Settings: Sendable {
        /// Messages leased and delivered at once.
        public var batch = 32
        /// Batches in flight at once, each claimed as the one before it
        /// finishes: while one waits for its slowest delivery and records
        /// the batch, the other delivers. In a release build on two cores,
        /// 2 000 messages to a local aiosmtpd went at 139/s with one, 195/s
        /// with two and 164/s with four (docs/performance.md).
        public var batchesInFlight = 2
        /// How long a lease lasts: longer than a delivery may take (the
        /// app's lookup, up to 5 s, and the sender's whole timeout, at most
        /// 120 s), so that two workers never hold one message.
        public var lease: Duration = .seconds(180)
        /// How often the outbox is asked when this replica queued nothing.
        public var pollInterval: Duration = .seconds(1)
        /// Attempts before a message that keeps failing transiently is given up.
        public var maximumAttempts = 8
        /// The pause after the first failed attempt (2 s); each next one doubles, up to 5 minutes.
        public var backoff = Backoff(first: .seconds(2), longest: .seconds(300))

        public init() {}
    }

    /// The audit row of a finished attempt (of a retry too, for an operator
    /// who asks why a message is late).
    public typealias Describe = @Sendable (_ message: ClaimedMessage, _ finish: OutboxFinish) -> AuditEvent

    let channel: String
    let store: any OutboxStore
    let doorbell: OutboxDoorbell
    let settings: Settings
    let logger: Logger
    let deliver: @Sendable (ClaimedMessage) async -> DeliveryResult
    let describe: Describe

    public init(
        channel: String, store: any OutboxStore, doorbell: OutboxDoorbell, settings: Settings = Settings(), logger: Logger,
        deliver: @escaping @Sendable (ClaimedMessage) async -> DeliveryResult, describe: @escaping Describe
    ) {
        self.channel = channel
        self.store = store
        self.doorbell = doorbell
        self.settings = settings
        self.logger = logger
        self.deliver = deliver
        self.describe = describe
    }

    /// Delivers until the task is cancelled, ``Settings/batchesInFlight``
    /// batches at once (they claim with `SKIP LOCKED`, as two replicas'
    /// workers do); a failing database is logged and asked again at the next poll.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for _ in 0..<max(1, settings.batchesInFlight) {
                group.addTask { await self.deliverUntilCancelled() }
            }
        }
    }

    private func deliverUntilCancelled() async {
        while !Task.isCancelled {
            do {
                if try await deliverDue() == settings.batch { continue }
            } catch {
                if Task.isCancelled { return }
                logger.warning("outbox unavailable", metadata: ["channel": "\(channel)", "error": "\(String(reflecting: error))"])
            }
            await doorbell.wait(upTo: settings.pollInterval)
        }
    }

    /// One batch: claims the due messages, delivers them all at once, and
    /// records how each attempt ended in one transaction; returns how many
    /// were claimed. Should that transaction fail, the leases run out and
    /// the messages go again (the receiver sees the same `Message-ID`).
    @discardableResult
    public func deliverDue() async throws -> Int {
        let claimed = try await store.claim(channel: channel, limit: settings.batch, lease: settings.lease)
        let ends = await withTaskGroup(of: OutboxAttemptEnd.self) { group in
            for message in claimed {
                group.addTask { await self.attempt(message) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        do {
            for (end, finished) in zip(ends, try await store.finish(ends)) where !finished {
                logger.warning(
                    "outbox lease ran out before the delivery finished; another worker has the message",
                    metadata: ["channel": "\(channel)", "message_id": "\(end.message.id)"])
            }
        } catch {
            logger.error(
                "outbox outcomes not recorded", metadata: ["messages": "\(ends.count)", "error": "\(String(reflecting: error))"])
        }
        return claimed.count
    }

    private func attempt(_ message: ClaimedMessage) async -> OutboxAttemptEnd {
        let finish: OutboxFinish =
            message.hasExpired
            ? .failed(reply: "expired before delivery")
            : Self.finish(after: await deliver(message), attempt: message.attempt, settings: settings)
        Counter(label: "gateway_outbox_deliveries_total", dimensions: [("channel", channel), ("outcome", finish.name)]).increment()
        return OutboxAttemptEnd(message, finish, row: describe(message, finish))
    }

    /// What an attempt's result makes of the message: a transient failure
    /// is tried again after `settings.backoff`'s pause for its attempt,
    /// unless it was the last attempt.
    public static func finish(after result: DeliveryResult, attempt: Int, settings: Settings) -> OutboxFinish {
        switch result {
        case .delivered(let reply): return .delivered(reply: reply)
        case .permanent(let reply): return .failed(reply: reply)
        case .transient(let reply):
            guard attempt < settings.maximumAttempts else { return .failed(reply: reply) }
            return .retry(after: settings.backoff.pause(beforeRetry: attempt), reply: reply)
        }
    }
}
