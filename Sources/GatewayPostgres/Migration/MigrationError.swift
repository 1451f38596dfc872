import GatewayCore

/// Why the migration runner refused to go on.
public struct MigrationError: Error, CustomStringConvertible {
    public let description: String

    static func edited(_ migration: Migration) -> MigrationError {
        MigrationError(description:
            "migration \(migration.source)/\(migration.name) was edited after it was applied "
            + "(checksum differs); add a new migration instead of changing an applied one")
    }

    static func unknown(source: String, name: String) -> MigrationError {
        MigrationError(description:
            "the database has migration \(source)/\(name) applied, which this binary does not know; "
            + "it was migrated by a newer version")
    }

    static func failed(_ migration: Migration, statement: String, error: any Error) -> MigrationError {
        MigrationError(description:
            "migration \(migration.source)/\(migration.name) failed and was rolled back: "
            + "\(PostgresErrorText.describe(error))\nstatement: \(statement)")
    }
}
