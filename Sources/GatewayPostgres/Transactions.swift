public import Logging
public import PostgresNIO

// The gateway's transactions run through `transaction`, never PostgresNIO's
// `withTransaction`: that one writes ROLLBACK after a statement that failed
// because a failover terminated its backend, on a connection that has
// closed, and waited forever for its answer (`ClosedConnections.swift`).
// Here BEGIN, COMMIT and ROLLBACK go through `whileOpen` like every other
// statement: on a closed connection they fail at once with
// ``ConnectionClosed``, a transient failure.

/// What failed in a ``PostgresConnection/transaction(logger:isolation:_:)``:
/// its BEGIN, its body (then whether the ROLLBACK after it failed too), or
/// its COMMIT.
public struct TransactionError: Error, CustomStringConvertible {
    public var beginError: (any Error)?
    public var closureError: (any Error)?
    public var rollbackError: (any Error)?
    public var commitError: (any Error)?

    /// PostgreSQL's message and SQLSTATE of each failure (``PostgresErrorText``), never a statement or its values.
    public var description: String {
        if let beginError { return "BEGIN failed: \(PostgresErrorText.describe(beginError))" }
        if let commitError { return "COMMIT failed: \(PostgresErrorText.describe(commitError))" }
        let body = closureError.map(PostgresErrorText.describe) ?? "unknown"
        return "the transaction failed: \(body)" + (rollbackError.map { "; ROLLBACK failed too: \(PostgresErrorText.describe($0))" } ?? "")
    }
}

extension PostgresConnection {
    /// Runs `body` between BEGIN and COMMIT; ROLLBACK when it throws.
    public func transaction<Result>(
        logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        do {
            try await control("BEGIN", logger: logger)
        } catch {
            throw TransactionError(beginError: error)
        }
        let value: Result
        do {
            value = try await body(self)
        } catch {
            var failure = TransactionError(closureError: error)
            do {
                try await control("ROLLBACK", logger: logger)
            } catch {
                failure.rollbackError = error
            }
            throw failure
        }
        do {
            try await control("COMMIT", logger: logger)
        } catch {
            throw TransactionError(commitError: error)
        }
        return value
    }

    /// BEGIN, COMMIT or ROLLBACK, refused on a closed connection.
    private func control(_ sql: PostgresQuery, logger: Logger) async throws {
        _ = try await whileOpen { try await self.query(sql, logger: logger).collect() }
    }
}

extension PostgresClient {
    /// ``PostgresConnection/transaction(logger:isolation:_:)`` on a connection of the pool.
    public func transaction<Result>(
        logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await withConnection(isolation: isolation) { connection in
            try await connection.transaction(logger: logger, isolation: isolation, body)
        }
    }
}
