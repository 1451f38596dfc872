/// Thrown by ``withTimeout(_:_:)`` when the operation took too long.
public struct TimeoutError: Error, CustomStringConvertible {
    public let description = "the operation timed out"
    public init() {}
}

/// Runs `operation`, cancelling it and throwing ``TimeoutError`` after `timeout`.
public func withTimeout<Result: Sendable>(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeoutError() }
        return first
    }
}
