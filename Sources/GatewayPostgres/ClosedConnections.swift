import NIOCore
import PostgresNIO

// PostgresNIO never answers a statement written to a connection that has
// closed: the write falls off the closed channel with no promise to fail,
// and its caller waits forever, holding its connection from the pool. A
// failover closes every connection at once, and statements reach closed
// ones in two ways: the pool leases a connection whose close it has not
// processed yet, and a statement checked on the caller's thread is written
// later on the connection's event loop, after the close it ran behind.
// `StatementsDuringCutsTests` terminates every backend under load: before
// this, most of the pool's statements never answered.
//
// So every statement the gateway sends goes through `whileOpen`: the task
// moves to the connection's own event loop (a task executor preference),
// checks there that the connection is open, and the statement is written
// in the same stretch, before the task suspends, so no close can come
// between the check and the write. A closed connection fails at once with
// ``ConnectionClosed``, a transient failure (the ledger retries; elsewhere
// it answers 503).

/// A connection that had closed (a failover, a cut): nothing more was written on it.
public struct ConnectionClosed: Error, CustomStringConvertible {
    public var description: String { "the database connection had closed" }
}

extension PostgresConnection {
    /// Runs `body` on this connection's event loop once it is known to be
    /// open there. `body` must write its statement before it first suspends:
    /// PostgresNIO's `query` and `execute` do (their first suspension waits
    /// for the answer); anything awaited before them would reopen the window.
    func whileOpen<Result>(_ body: () async throws -> Result) async throws -> Result {
        try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            guard !isClosed else { throw ConnectionClosed() }
            return try await body()
        }
    }
}

/// A task executor that runs its jobs on one NIO event loop. On it, a
/// nonisolated async call does not hop (the task already runs on its
/// preferred executor), and PostgresNIO's writes are made inline.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
