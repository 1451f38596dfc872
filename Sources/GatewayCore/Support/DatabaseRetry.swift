/// How a request's database step waits out a database that fails over or
/// restarts: each attempt may take `attemptTimeout`, and an attempt that
/// fails for a reason worth waiting out (it timed out, the database was
/// unavailable, or `isTransient` says so: a cut connection, a server
/// shutting down) is made again after a pause (``Backoff/database``: 50 ms
/// growing to 500 ms), for as long as `window` allows; then the step answers 503 `unavailable`.
/// Only for steps that may be made twice (reads): a write whose first
/// attempt's fate is unknown needs a form of its own (the request ledger's
/// retry statement).
public struct DatabaseRetry: Sendable {
    public let attemptTimeout: Duration
    public let window: Duration
    private let isTransient: @Sendable (any Error) -> Bool

    public init(
        attemptTimeout: Duration, window: Duration = .zero, isTransient: @escaping @Sendable (any Error) -> Bool = { _ in false }
    ) {
        self.attemptTimeout = attemptTimeout
        self.window = window
        self.isTransient = isTransient
    }

    /// One attempt within `timeout`, never retried: how a step was bounded before retries.
    public static func once(within timeout: Duration) -> DatabaseRetry {
        DatabaseRetry(attemptTimeout: timeout)
    }

    /// Runs `step`, again after a failure worth waiting out, within the window.
    public func run<Result: Sendable>(_ step: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let deadline = ContinuousClock.now + window
        var retries = 0
        while true {
            do {
                return try await withTimeout(attemptTimeout, step)
            } catch {
                let worthWaiting = error is TimeoutError || (error as? GatewayError)?.code == .unavailable || isTransient(error)
                retries += 1
                let pause = Backoff.database.pause(beforeRetry: retries)
                guard worthWaiting, ContinuousClock.now + pause < deadline, !Task.isCancelled else {
                    if error is TimeoutError { throw GatewayError.unavailable }
                    throw error
                }
                try await Task.sleep(for: pause)
            }
        }
    }
}
