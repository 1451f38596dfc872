import Argon2
import CoreMetrics
import GatewayCore
import HummingbirdBcrypt
import NIOCore
import NIOPosix
import Synchronization
public import Tracing

/// Runs password hashing and verification on its own threads, never on the
/// request executor, with bounded admission: at most `concurrency` hashes run,
/// their memory together within `memoryBudgetKiB`, and at most `queueLimit`
/// wait (for a thread or for memory); past that a caller gets 503 `busy` at
/// once instead of queueing (and holding memory) without bound. Threads are
/// handed out fairly (``HashTurns``): logins before admin work, apps in turn,
/// and one app's admin work on at most half the threads with at most
/// ``adminQueuePerApp`` of its hashes admitted. The operator's ceiling on
/// argon2 cost (``Limits/maximumMemoryKiB``, ``Limits/maximumIterations``)
/// and on bcrypt cost (``Limits/maximumBcryptCost``) bounds what apps may
/// set and what imports may bring.
public final class PasswordHasher: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Hashes computed at once; each holds its `memoryKiB` while it runs.
        public var concurrency: Int
        /// Hashes allowed to wait for a thread or for memory.
        public var queueLimit: Int
        /// The most memory one argon2 hash may use (an app's setting, an imported hash).
        public var maximumMemoryKiB: Int
        /// The most passes one argon2 hash may make.
        public var maximumIterations: Int
        /// Memory all running hashes may hold together.
        public var memoryBudgetKiB: Int
        /// The highest bcrypt cost an imported hash may have: each step doubles a login's work.
        public var maximumBcryptCost: Int

        /// PHP's `password_hash` argon2id defaults, m=64 MiB and t=4, fit under the default ceiling.
        public static let defaultMaximumMemoryKiB = 65_536
        public static let defaultMaximumIterations = 4
        /// bcrypt cost 12 takes about as long as one argon2 verification at the default ceiling.
        public static let defaultMaximumBcryptCost = 12

        /// - Parameters:
        ///   - concurrency: `nil` for one hash per core.
        ///   - memoryBudgetKiB: `nil` for half the memory limit of the
        ///     process's cgroup when it has one, else room for `concurrency`
        ///     hashes at the ceiling.
        public init(
            concurrency: Int? = nil, queueLimit: Int = 64, maximumMemoryKiB: Int = defaultMaximumMemoryKiB,
            maximumIterations: Int = defaultMaximumIterations, memoryBudgetKiB: Int? = nil,
            maximumBcryptCost: Int = defaultMaximumBcryptCost
        ) {
            self.maximumBcryptCost = maximumBcryptCost
            self.concurrency = concurrency ?? System.coreCount
            self.queueLimit = queueLimit
            self.maximumMemoryKiB = maximumMemoryKiB
            self.maximumIterations = maximumIterations
            self.memoryBudgetKiB =
                memoryBudgetKiB ?? CgroupMemory.limitBytes().map { max(Int($0 / 1024 / 2), maximumMemoryKiB) }
                ?? self.concurrency * maximumMemoryKiB
        }

        /// 400 naming the ceiling when an imported `hash` costs more than it allows.
        func check(_ hash: PasswordHash, _ what: String) throws(GatewayError) {
            if let parameters = hash.argon2Parameters { try check(parameters, what) }
            if let cost = hash.bcryptCost, cost > maximumBcryptCost {
                throw .invalidRequest(
                    "\(what) has bcrypt cost \(cost); this gateway allows at most \(maximumBcryptCost) (password.max_bcrypt_cost).")
            }
        }

        /// 400 naming the ceiling when `parameters` exceed it; `what` names the setting or hash.
        func check(_ parameters: Argon2Parameters, _ what: String) throws(GatewayError) {
            guard parameters.memoryKiB <= maximumMemoryKiB else {
                throw .invalidRequest(
                    "\(what) uses \(parameters.memoryKiB) KiB; this gateway allows at most \(maximumMemoryKiB) (password.max_memory_kib).")
            }
            guard parameters.iterations <= maximumIterations else {
                throw .invalidRequest(
                    "\(what) makes \(parameters.iterations) passes; this gateway allows at most \(maximumIterations) (password.max_iterations).")
            }
        }
    }

    public let limits: Limits
    /// Hashes running or waiting, and how long each took, waiting included.
    private static let depthGauge = Gauge(label: "gateway_password_hash_queue_depth")
    private static let durationTimer = CoreMetrics.Timer(label: "gateway_password_hash_seconds")
    private let pool: NIOThreadPool
    private let memory: HashMemoryBudget
    private let turns: HashTurns
    private let admitted = Atomic<Int>(0)
    /// Admin hashes admitted (running or waiting) by app.
    private let adminAdmitted = Mutex<[AppID: Int]>([:])
    /// One hash per parameter set, to verify against when the user does not
    /// exist, so that an unknown user costs exactly what a wrong password does.
    private let dummyHashes = Mutex<[Argon2Parameters: PasswordHash]>([:])

    public init(limits: Limits = Limits()) {
        precondition(limits.concurrency >= 1 && limits.queueLimit >= 0)
        self.limits = limits
        self.memory = HashMemoryBudget(capacityKiB: max(limits.memoryBudgetKiB, 1))
        self.turns = HashTurns(threads: limits.concurrency)
        self.pool = NIOThreadPool(numberOfThreads: limits.concurrency)
        pool.start()
    }

    deinit {
        pool.shutdownGracefully { _ in }
    }

    /// Hashes being computed or waiting for a thread.
    public var depth: Int { admitted.load(ordering: .relaxed) }

    /// Hashes holding a thread or waiting their turn for one.
    var inTurn: Int { turns.count }

    /// KiB held by running hashes now.
    public var memoryInUseKiB: Int { memory.inUseKiB }

    /// How many of one app's admin hashes may be admitted at once (running
    /// or waiting); past that its admin work is refused with 503 `busy`.
    public var adminQueuePerApp: Int { max(limits.concurrency, limits.queueLimit / 8, 1) }

    /// Runs blocking `work`, which holds `memoryKiB` while it runs, on the
    /// hashing threads when its turn comes (``HashTurns``), under the
    /// admission limit and the memory budget.
    ///
    /// - Throws: ``GatewayError/busy`` when `concurrency + queueLimit`
    ///   hashes are admitted already, or `purpose` is admin work and its app
    ///   has ``adminQueuePerApp`` admitted.
    ///
    /// In a traced request, a span named `spanName` covers the work on its
    /// thread, with `attributes` (the cost), and one before it the wait for
    /// a turn and for the memory budget.
    public func perform<Result: Sendable>(
        memoryKiB: Int, for purpose: PasswordHashWork, spanName: String = "password hash",
        attributes: SpanAttributes = [:], _ work: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        let depth = admitted.wrappingAdd(1, ordering: .relaxed).newValue
        Self.depthGauge.record(depth)
        defer { Self.depthGauge.record(admitted.wrappingSubtract(1, ordering: .relaxed).newValue) }
        guard depth <= limits.concurrency + limits.queueLimit else { throw Self.refusal() }
        if case .admin(let appID) = purpose {
            let share = adminQueuePerApp
            let admittedHere = adminAdmitted.withLock { counts -> Bool in
                guard counts[appID, default: 0] < share else { return false }
                counts[appID, default: 0] += 1
                return true
            }
            guard admittedHere else { throw Self.refusal() }
        }
        defer {
            if case .admin(let appID) = purpose {
                adminAdmitted.withLock { counts in
                    counts[appID, default: 1] -= 1
                    if counts[appID] == 0 { counts[appID] = nil }
                }
            }
        }
        let started = ContinuousClock.now
        let queued = DefaultTracerClock.now
        defer { Self.durationTimer.recordNanoseconds((ContinuousClock.now - started).nanoseconds) }
        await turns.take(purpose)
        defer { turns.finished(purpose) }
        await memory.acquire(memoryKiB)
        defer { memory.release(memoryKiB) }
        Spans.record(
            "\(spanName) queue", from: queued, to: DefaultTracerClock.now,
            attributes: ["gateway.hash.memory_kib": .int64(Int64(memoryKiB))])
        return try await Spans.run(spanName, attributes: attributes) { _ in try await pool.runIfActive(work) }
    }

    private static func refusal() -> GatewayError {
        Counter(label: "gateway_password_hash_refusals_total").increment()
        return GatewayError.busy
    }

    /// A new argon2id hash of `password`.
    func hash(_ password: String, parameters: Argon2Parameters, for purpose: PasswordHashWork) async throws -> PasswordHash {
        let text = try await perform(
            memoryKiB: parameters.memoryKiB, for: purpose, spanName: "argon2id hash", attributes: Self.cost(parameters)
        ) { try Argon2.hash(password, parameters: parameters) }
        guard let hash = PasswordHash(text) else { throw Argon2Error.malformedHash }
        return hash
    }

    /// Whether `password` matches `hash`, whatever its scheme.
    func verify(_ password: String, against hash: PasswordHash, for purpose: PasswordHashWork) async throws -> Bool {
        let cost: SpanAttributes =
            hash.bcryptCost.map { ["gateway.bcrypt.cost": .int64(Int64($0))] } ?? hash.argon2Parameters.map(Self.cost) ?? [:]
        return try await perform(
            memoryKiB: hash.memoryKiB, for: purpose, spanName: "\(hash.scheme) verify", attributes: cost
        ) {
            switch hash.scheme {
            case .argon2id, .argon2i:
                return try Argon2.verify(password, against: hash.text)
            case .bcrypt:
                // The bcrypt code knows $2a$ and $2b$; $2y$ (PHP's name) is the same algorithm as $2b$.
                let text = hash.text.hasPrefix("$2y$") ? "$2b$" + hash.text.dropFirst(4) : hash.text
                return Bcrypt.verify(password, hash: text)
            }
        }
    }

    /// Verifies `password` against a hash of a password nobody has, made
    /// with `parameters`: the work of a real verification, always `false`.
    func verifyAgainstNobody(_ password: String, parameters: Argon2Parameters, for purpose: PasswordHashWork) async throws {
        let dummy: PasswordHash
        if let cached = dummyHashes.withLock({ $0[parameters] }) {
            dummy = cached
        } else {
            dummy = try await hash(Self.randomSecret(), parameters: parameters, for: purpose)
            dummyHashes.withLock { $0[parameters] = dummy }
        }
        _ = try await verify(password, against: dummy, for: purpose)
    }

    /// An argon2 hash's cost, as its span reports it.
    private static func cost(_ parameters: Argon2Parameters) -> SpanAttributes {
        [
            "gateway.argon2.memory_kib": .int64(Int64(parameters.memoryKiB)),
            "gateway.argon2.iterations": .int64(Int64(parameters.iterations)),
            "gateway.argon2.parallelism": .int64(Int64(parameters.parallelism)),
        ]
    }

    private static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next(), radix: 36) }.joined()
    }
}
