import Synchronization

/// Thrown by ``withTimeout(_:_:)`` when the operation took too long.
public struct TimeoutError: Error, CustomStringConvertible {
    public let description = "the operation timed out"
    public init() {}
}

/// Runs `operation` and returns its result, or throws ``TimeoutError`` once
/// `timeout` has passed, whichever comes first. The caller is answered on
/// time even if the operation ignores cancellation (a connection-pool wait
/// may): it is cancelled and left to finish on its own.
public func withTimeout<Result: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let race = TimeoutRace<Result>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.begin(continuation)
            race.track(Task { race.finish(await Swift.Result(catching: operation)) })
            race.track(
                Task {
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    race.finish(.failure(TimeoutError()))
                })
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of the operation, the timer and cancellation to finish answers the caller.
private final class TimeoutRace<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var finished: Swift.Result<Result, any Error>?
        var tasks: [Task<Void, Never>] = []
    }

    private let state = Mutex(State())

    func begin(_ continuation: CheckedContinuation<Result, any Error>) {
        let early = state.withLock { state -> Swift.Result<Result, any Error>? in
            if let finished = state.finished { return finished }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func track(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            state.tasks.append(task)
            return state.finished != nil
        }
        if cancelNow { task.cancel() }
    }

    func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<Result, any Error>?, [Task<Void, Never>]) in
            guard state.finished == nil else { return (nil, []) }
            state.finished = result
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        continuation?.resume(with: result)
        for task in tasks { task.cancel() }
    }
}

extension Swift.Result where Failure == any Error {
    fileprivate init(catching body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}

/// Runs one database step within `timeout`; past it, 503 `unavailable`.
public func withDatabaseTimeout<Result: Sendable>(
    _ timeout: Duration, _ step: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    do {
        return try await withTimeout(timeout, step)
    } catch is TimeoutError {
        throw GatewayError.unavailable
    }
}

extension Duration {
    /// The whole duration in nanoseconds, for metrics.
    public var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// The whole duration in milliseconds, rounded down, for PostgreSQL's `lock_timeout` and messages.
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// The whole duration in seconds, for SQL's `make_interval(secs => ...)`.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
