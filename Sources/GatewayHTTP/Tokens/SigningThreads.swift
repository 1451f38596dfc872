import Dispatch
public import Foundation
import GatewayCore
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
/// The application makes one (`buildApplication`) and hands it to the token
/// path through ``GatewayDependencies/Options/signers``. Its threads run until the
/// process ends: stopping them when the instance was released was tried,
/// and full test runs then failed (memory damage with exiting Foundation
/// threads, stalls with NIO's pool), cause not established.
public final class SigningThreads: Sendable {
    /// One instance for every router a test builds: tests make hundreds of
    /// gateways in one process, and must not make threads for each.
    public static let sharedByTests = SigningThreads()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    /// Counts the jobs not yet taken; each thread waits on it.
    private let waiting = DispatchSemaphore(value: 0)

    public init(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        precondition(threads >= 1)
        for index in 0..<threads {
            Thread { [self] in
                Self.nameCurrentThread("token-signer-\(index)")
                serve()
            }.start()
        }
    }

    /// Runs `work` on a signing thread and returns what it returned or threw.
    /// In a traced request, two spans named after `name` say how long the
    /// work waited for a thread and how long it ran.
    public func run<Value: Sendable>(
        _ name: String = "signing thread", attributes: SpanAttributes = [:],
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        guard Spans.areRecorded else {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                jobs.withLock { $0.append { continuation.resume(with: Result { try work() }) } }
                waiting.signal()
            }
        }
        let queued = DefaultTracerClock.now
        let (result, started, ended) = await withCheckedContinuation {
            (continuation: CheckedContinuation<(Result<Value, any Error>, DefaultTracerClock.Instant, DefaultTracerClock.Instant), Never>) in
            jobs.withLock {
                $0.append {
                    let started = DefaultTracerClock.now
                    let result = Result { try work() }
                    continuation.resume(returning: (result, started, DefaultTracerClock.now))
                }
            }
            waiting.signal()
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

    private func serve() -> Never {
        while true {
            waiting.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job()
        }
    }
}
