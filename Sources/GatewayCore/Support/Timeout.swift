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
///
/// ``DeadlineWatch`` keeps the deadline: one task watches every call in
/// flight, so a call costs its operation's task and no timer of its own.
public func withTimeout<Result: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withTimeout(timeout, watchedBy: .shared, operation)
}

func withTimeout<Result: Sendable>(
    _ timeout: Duration, watchedBy watch: DeadlineWatch, _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let race = TimeoutRace<Result>()
    let deadline = watch.add(ContinuousClock.now.advanced(by: timeout)) { race.finish(.failure(TimeoutError())) }
    defer { watch.remove(deadline) }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.begin(continuation)
            race.track(Task { race.finish(await Swift.Result(catching: operation)) })
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of the operation, the deadline and cancellation to finish answers the caller.
private final class TimeoutRace<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var finished: Swift.Result<Result, any Error>?
        var operation: Task<Void, Never>?
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

    func track(_ operation: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            state.operation = operation
            return state.finished != nil
        }
        if cancelNow { operation.cancel() }
    }

    func finish(_ result: Swift.Result<Result, any Error>) {
        let (continuation, operation) = state.withLock {
            state -> (CheckedContinuation<Result, any Error>?, Task<Void, Never>?) in
            guard state.finished == nil else { return (nil, nil) }
            state.finished = result
            defer { state.continuation = nil }
            return (state.continuation, state.operation)
        }
        continuation?.resume(with: result)
        operation?.cancel()
    }
}

extension Swift.Result where Failure == any Error {
    /// The operation's value or the error it threw.
    init(catching body: () async throws -> Success) async {
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
}
