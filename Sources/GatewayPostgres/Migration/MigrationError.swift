import GatewayCore
import PostgresNIO

/// Why the migration runner refused to go on.
public struct MigrationError: Error, CustomStringConvertible {
    public let description: String

    static func edited(_ migration: Migration) -> MigrationError {
        MigrationError(description:
            "migration \(migration.source)/\(migration.name) was edited after it was applied "
            + "(checksum differs); add a new migration instead of changing an applied one")
    }

    /// Whether it failed waiting for a lock past `lock_timeout` (SQLSTATE 55P03): worth another try.
    public var waitedForALock = false

    static func tooNew(_ name: String) -> MigrationError {
        MigrationError(description:
            "the database has migration \(name) applied, which this binary does not know and which removes or changes "
            + "what this release reads: it was migrated by a newer release; run that release (or a newer one)")
    }

    static func failed(_ migration: Migration, statement: String, error: any Error, lockTimeout: Duration) -> MigrationError {
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == "55P03" {
            var failure = MigrationError(description:
                "migration \(migration.source)/\(migration.name) waited more than its lock timeout "
                + "(\(lockTimeout.milliseconds) ms) for a lock and was rolled back: a long transaction holds a table it "
                + "changes; find it in pg_stat_activity, then migrate again\nstatement: \(statement)")
            failure.waitedForALock = true
            return failure
        }
        return MigrationError(description:
            "migration \(migration.source)/\(migration.name) failed and was rolled back: "
            + "\(PostgresErrorText.describe(error))\nstatement: \(statement)")
    }
}
