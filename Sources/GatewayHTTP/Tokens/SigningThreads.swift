import Dispatch
public import Foundation
import GatewayCore
import NIOPosix
import Synchronization
public import Tracing

/// Threads of their own for RSA signatures, one a core, outside Swift's
/// cooperative pool.
///
/// A signature holds a core for 0.25–1 ms. On the cooperative pool, which
/// also has one thread a core, every other step of a token (the
/// group-commit loop taking its answer, each waiting request resuming) waits
/// behind the signatures queued before it. Here the kernel shares the cores
/// between the signers and those short steps instead. The group-commit loop
/// then comes round as soon as its batch commits, which keeps one batch in
/// flight busy (`PostgresRequestLedger` in GatewayPostgres). The figures
/// are in docs/performance.md ("What changed").
///
/// The threads belong to whoever holds this: they start at the first
/// signature, and stop once it is released, after the signatures queued
/// before (the application's, when its server has stopped; a test
/// gateway's, when its test ends).
public final class SigningThreads: Sendable {
    private let queue = JobQueue()
    /// Where the threads come from: NIO's pool starts and joins them.
    private let pool: NIOThreadPool
    private let threads: Int
    private let started = Atomic<Bool>(false)

    /// One instance for every router a test builds: tests make hundreds of
    /// gateways in one process, and need not make threads for each.
    public static let sharedByTests = SigningThreads()

    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        precondition(threads >= 1)
        self.threads = threads
        pool = NIOThreadPool(numberOfThreads: threads)
    }

    deinit {
        guard started.load(ordering: .acquiring) else { return }
        // Each thread ends its loop after the jobs queued before, then the pool joins them.
        queue.stop(threads: threads)
        pool.shutdownGracefully { _ in }
    }

    private func startIfNeeded() {
        guard !started.load(ordering: .acquiring),
            started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        pool.start()
        for index in 0..<threads {
            // The loops hold the queue, not this object, so releasing it stops them.
            pool.submit { [queue] state in
                guard case .active = state else { return }
                Self.nameCurrentThread("token-signer-\(index)")
                queue.serve()
            }
        }
    }

    /// Runs `work` on a signing thread and returns what it returned or threw.
    /// In a traced request, two spans named after `name` say how long the
    /// work waited for a thread and how long it ran.
    public func run<Value: Sendable>(
        _ name: String = "signing thread", attributes: SpanAttributes = [:],
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        startIfNeeded()
        guard Spans.areRecorded else {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                queue.add { continuation.resume(with: Result { try work() }) }
            }
        }
        let queued = DefaultTracerClock.now
        let (result, started, ended) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(Result<Value, any Error>, DefaultTracerClock.Instant, DefaultTracerClock.Instant), Never>) in
            queue.add {
                let started = DefaultTracerClock.now
                let result = Result { try work() }
                continuation.resume(returning: (result, started, DefaultTracerClock.now))
            }
        }
        Spans.record("\(name) queue", from: queued, to: started)
        Spans.record(name, from: started, to: ended, attributes: attributes)
        return try result.get()
    }

    /// Names the calling thread, as `top -H` and /proc show it (15 bytes at
    /// most). On Linux it writes /proc/thread-self/comm, because Foundation's
    /// `Thread.name` did not reliably reach the kernel: set before `start()`
    /// it never did, and set from inside the new thread it once left the
    /// creating thread's name (in a full test run, under load).
    private static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
        #else
        Thread.current.name = name
        #endif
    }
}

/// The signing threads' jobs, first in first out; `nil` tells the thread
/// that takes it to end.
private final class JobQueue: Sendable {
    private let jobs = Mutex<[(@Sendable () -> Void)?]>([])
    /// Counts the jobs not yet taken; each thread waits on it.
    private let waiting = DispatchSemaphore(value: 0)

    func add(_ job: @escaping @Sendable () -> Void) { push(job) }

    /// Ends `threads` threads once the jobs queued before are done.
    func stop(threads: Int) {
        for _ in 0..<threads { push(nil) }
    }

    func serve() {
        while true {
            waiting.wait()
            guard let job = jobs.withLock({ $0.removeFirst() }) else { return }
            job()
        }
    }

    private func push(_ job: (@Sendable () -> Void)?) {
        jobs.withLock { $0.append(job) }
        waiting.signal()
    }
}
