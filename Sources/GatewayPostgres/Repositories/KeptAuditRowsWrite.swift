import Foundation
import GatewayCore
import Logging
import PostgresNIO

/// Inserts rows the ``AuditBacklog`` kept, with the time each was made.
/// A row whose request already has a row of the same event is skipped: the
/// first attempt at it may have committed after the gateway stopped waiting.
/// Runs only after an outage, so it is not prepared.
enum KeptAuditRowsWrite {
    static let sql = """
        INSERT INTO audit_events (occurred_at, \(LedgerWriteStatement.eventColumns))
        SELECT e.occurred_at, \(LedgerWriteStatement.eventValues)
        FROM unnest($1::timestamptz[], \(LedgerWriteStatement.eventArrays(from: 2)))
            AS e(occurred_at, \(LedgerWriteStatement.eventColumns))
        WHERE NOT EXISTS (
            SELECT 1 FROM audit_events a WHERE a.request_id = e.request_id AND a.event = e.event
        )
        """

    /// Writes `rows` in one transaction that PostgreSQL itself ends after
    /// `statementTimeout`: an attempt the gateway gave up on does not linger
    /// to commit beside the next one, which would repeat its rows.
    static func run(_ rows: [AuditBacklog.Row], client: PostgresClient, statementTimeout: Duration, logger: Logger)
        async throws
    {
        var bindings = PostgresBindings(capacity: 13)
        bindings.append(rows.map(\.occurredAt))
        LedgerWriteStatement.appendEventColumns(rows.map(\.event), to: &bindings)
        let insert = PostgresQuery(unsafeSQL: sql, binds: bindings)
        let milliseconds = max(1, statementTimeout.nanoseconds / 1_000_000)
        try await client.transaction(logger: logger) { connection in
            try await connection.tracedQuery("SET LOCAL statement_timeout = \(unescaped: String(milliseconds))", logger: logger)
            try await connection.tracedQuery(insert, logger: logger)
        }
    }
}
