import PostgresNIO

/// Transaction-scoped advisory locks on the requests of a ledger batch, in
/// one order (by key), so two transactions never wait on each other in a
/// circle. Every attempt at a batch takes them before it writes and holds
/// them to its end, so a retry waits until an earlier attempt that timed
/// out, but is still running (its statement, or its commit), has committed
/// or rolled back; only then does the retry's statement look for its rows
/// (its snapshot is taken after the locks), and it writes none twice. A
/// retry takes them with this statement, in its transaction; a first
/// attempt within its own statement (``LedgerWriteStatement``, ``taking(_:)``).
struct RequestLocks: PostgresPreparedStatement {
    typealias Row = Void
    static let name = "ledger_request_locks"
    static let sql = taking("$1")

    /// The query that takes the locks of the request ids in the text array `parameter`, a row a lock.
    static func taking(_ parameter: String) -> String {
        """
        SELECT pg_advisory_xact_lock(key)
        FROM (SELECT DISTINCT hashtextextended(id, 20561) AS key FROM unnest(\(parameter)::text[]) AS id) AS keys
        ORDER BY key
        """
    }

    let requestIDs: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(requestIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}
