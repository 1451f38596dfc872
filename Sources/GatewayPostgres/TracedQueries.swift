import GatewayCore
public import Logging
public import PostgresNIO
import Tracing

// The gateway's statements go through these, never PostgresNIO's `query`
// and `execute` themselves. Each is a database client span of the current
// request (none outside one: PostgresNIO makes no spans of its own):
// `db.system.name` and `db.operation.name` (the statement's first word),
// never the statement's text or its parameters. And each is written through
// `whileOpen`, so a connection that has closed refuses it at once instead of
// never answering (`ClosedConnections.swift`).

extension PostgresClient {
    /// A query on a connection of the pool: its rows.
    @discardableResult
    public func tracedQuery(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [PostgresRow] {
        try await withConnection { try await $0.tracedQuery(query, logger: logger, file: file, line: line) }
    }

    /// A prepared statement (parsed and planned once per connection), as
    /// ``tracedQuery(_:logger:file:line:)`` runs a query: for the hot paths.
    @discardableResult
    public func tracedExecute<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await withConnection { try await $0.tracedExecute(statement, logger: logger, file: file, line: line) }
    }
}

// A write whose success the gateway reports runs through `committedQuery` or
// `committedExecute`, or in a transaction of its own: PostgresNIO ends a
// statement's rows at its CommandComplete, and a lone statement commits only
// at the Sync after it. A backend ended between the two (a failover's fast
// shutdown terminates every backend) rolls back a write whose rows the caller
// has already read. So a lone write is confirmed: an empty query sent after
// it on the same connection is answered only after PostgreSQL's
// ReadyForQuery for the write, which comes once its commit is flushed, and a
// commit that fails closes the connection (or answers an error), failing the
// confirmation. Two round trips, where BEGIN, the statement and COMMIT took
// three (`CommitConfirmationTests` makes the commit fail on purpose).
extension PostgresClient {
    /// `query` alone, committed: its rows, once the commit is confirmed.
    @discardableResult
    public func committedQuery(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [PostgresRow] {
        try await withConnection { connection in
            let rows = try await connection.tracedQuery(query, logger: logger, file: file, line: line)
            try await connection.confirmCommit(logger: logger)
            return rows
        }
    }

    /// A prepared statement alone, committed: its decoded rows, once the commit is confirmed.
    @discardableResult
    public func committedExecute<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await withConnection { try await $0.committedExecute(statement, logger: logger, file: file, line: line) }
    }
}

extension PostgresConnection {
    /// A prepared statement alone on this connection (never inside a
    /// transaction: it would commit nothing), committed: its decoded rows,
    /// once the commit is confirmed.
    @discardableResult
    public func committedExecute<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [Statement.Row] {
        let rows = try await tracedExecute(statement, logger: logger, file: file, line: line)
        try await confirmCommit(logger: logger)
        return rows
    }

    /// Returns once PostgreSQL has answered what was sent before: the last
    /// statement's commit, when it ran alone.
    func confirmCommit(logger: Logger) async throws {
        _ = try await whileOpen { try await self.query("", logger: logger).collect() }
    }
}

extension PostgresConnection {
    /// A query on this connection (in a transaction, say): its rows. Refused
    /// at once if the connection has closed (``ConnectionClosed``).
    @discardableResult
    public func tracedQuery(
        _ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [PostgresRow] {
        try await DatabaseSpan.run(query.sql) {
            try await whileOpen { try await self.query(query, logger: logger, file: file, line: line).collect() }
        }
    }

    /// A prepared statement, as ``tracedQuery(_:logger:file:line:)`` runs a query: its decoded rows.
    @discardableResult
    public func tracedExecute<Statement: PostgresPreparedStatement>(
        _ statement: Statement, logger: Logger, file: String = #fileID, line: Int = #line
    ) async throws -> [Statement.Row] {
        try await DatabaseSpan.run(Statement.sql) {
            try await whileOpen {
                var rows: [Statement.Row] = []
                for try await row in try await self.execute(statement, logger: logger, file: file, line: line) {
                    rows.append(row)
                }
                return rows
            }
        }
    }
}

extension [PostgresRow] {
    /// Each row's columns as `columns`, in order (`PostgresRowSequence.decode`'s twin for collected rows).
    public func decode<each Column: PostgresDecodable>(
        _ columns: (repeat each Column).Type, file: String = #fileID, line: Int = #line
    ) throws -> [(repeat each Column)] {
        try map { try $0.decode(columns, file: file, line: line) }
    }
}

enum DatabaseSpan {
    static func run<Result>(
        _ sql: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async throws -> Result {
        guard Spans.areRecorded else { return try await body() }
        let operation = operation(of: sql)
        return try await Spans.run(
            operation, kind: .client,
            attributes: ["db.system.name": "postgresql", "db.operation.name": .string(operation)]
        ) { _ in try await body() }
    }

    /// The statement's first word, upper-cased (`SELECT`, `INSERT`, `WITH`, ...).
    static func operation(of sql: String) -> String {
        sql.drop { $0.isWhitespace }.prefix { $0.isLetter }.uppercased()
    }
}
