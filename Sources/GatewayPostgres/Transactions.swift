public import Logging
public import PostgresNIO

// PostgresNIO never answers a query written to a connection that has
// closed: the write falls off the closed channel, and its caller waits
// forever. Its own `withTransaction` writes ROLLBACK after a statement that
// failed because a failover terminated its backend, and its pool can lease a
// connection whose close it has not seen yet, so a transaction cut by a
// failover never returned, and its connection never went back to the pool
// (`TransactionTests` terminates one). The gateway's transactions run
// through `transaction` instead: BEGIN, COMMIT and ROLLBACK are written on
// the connection's event loop, and only while it is open; on a closed one
// they fail at once with ``ConnectionClosed``, a transient failure.

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

/// A connection that had closed (a failover, a cut): nothing more was written on it.
public struct ConnectionClosed: Error, CustomStringConvertible {
    public var description: String { "the database connection had closed" }
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

    /// A statement written on the connection's event loop, and only while the connection is open.
    private func control(_ sql: PostgresQuery, logger: Logger) async throws {
        let eventLoop = eventLoop
        _ = try await eventLoop.flatSubmit { () -> EventLoopFuture<PostgresQueryResult> in
            guard !self.isClosed else { return eventLoop.makeFailedFuture(ConnectionClosed()) }
            return self.query(sql, logger: logger)
        }.get()
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
