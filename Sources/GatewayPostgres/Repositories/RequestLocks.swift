import PostgresNIO

/// Transaction-scoped advisory locks on the requests of a ledger batch,
/// taken before its statement, in one order (by key), so two transactions
/// never wait on each other in a circle. Every attempt at a batch takes
/// them and holds them to its end, so a retry waits until an earlier
/// attempt that timed out, but is still running (its statement, or its
/// COMMIT), has committed or rolled back; only then does the retry's
/// statement look for its rows (its snapshot is taken after the locks),
/// and it writes none twice.
struct RequestLocks: PostgresPreparedStatement {
    typealias Row = Void
    static let name = "ledger_request_locks"
    static let sql = """
        SELECT pg_advisory_xact_lock(key)
        FROM (SELECT DISTINCT hashtextextended(id, 20561) AS key FROM unnest($1::text[]) AS id) AS keys
        ORDER BY key
        """

    let requestIDs: [String]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(requestIDs)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws {}
}
