public import GatewayCore
public import Logging
public import PostgresNIO

/// Applies migrations in order, each in its own transaction, under a
/// Postgres advisory lock so concurrent runners (several replicas starting at
/// once) apply each file exactly once. Applied files are recorded with a
/// checksum; a changed applied file stops the run.
public struct MigrationRunner: Sendable {
    /// Key of the advisory lock held while migrating ("idgw" + "migr").
    static let lockKey: Int64 = 0x6964_6777_6d69_6772

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Applies every migration not applied yet and returns their names
    /// (`source/name`), in order. A second run returns an empty list.
    @discardableResult
    public func run(_ migrations: [Migration]) async throws -> [String] {
        try await client.withConnection { connection in
            try await connection.tracedQuery("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
            do {
                let applied = try await applyMissing(migrations, on: connection)
                try await connection.tracedQuery("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.tracedQuery("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                throw error
            }
        }
    }

    /// The migrations not applied yet; throws when an applied one was edited
    /// or the database knows one this binary does not.
    public func pending(_ migrations: [Migration]) async throws -> [Migration] {
        try await client.withConnection { connection in
            try await ensureHistoryTable(on: connection)
            return try await missing(migrations, on: connection)
        }
    }

    private func applyMissing(_ migrations: [Migration], on connection: PostgresConnection) async throws -> [String] {
        try await ensureHistoryTable(on: connection)
        var appliedNow: [String] = []
        for migration in try await missing(migrations, on: connection) {
            try await connection.transaction(logger: logger) { connection in
                for statement in SQLStatementSplitter.split(migration.sql) {
                    do {
                        try await connection.tracedQuery(PostgresQuery(unsafeSQL: statement), logger: logger)
                    } catch {
                        throw MigrationError.failed(migration, statement: statement, error: error)
                    }
                }
                try await connection.tracedQuery(
                    """
                    INSERT INTO schema_migrations (source, name, checksum)
                    VALUES (\(migration.source), \(migration.name), \(migration.checksum))
                    """, logger: logger)
            }
            logger.info("applied migration", metadata: ["migration": "\(migration.source)/\(migration.name)"])
            appliedNow.append("\(migration.source)/\(migration.name)")
        }
        return appliedNow
    }

    private func ensureHistoryTable(on connection: PostgresConnection) async throws {
        try await connection.tracedQuery(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                source     text        NOT NULL,
                name       text        NOT NULL,
                checksum   text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (source, name)
            )
            """, logger: logger)
    }

    private func missing(_ migrations: [Migration], on connection: PostgresConnection) async throws -> [Migration] {
        var applied: [String: String] = [:]
        let rows = try await connection.tracedQuery("SELECT source, name, checksum FROM schema_migrations", logger: logger)
        for (source, name, checksum) in try rows.decode((String, String, String).self) {
            applied["\(source)/\(name)"] = checksum
        }
        let known = Set(migrations.map { "\($0.source)/\($0.name)" })
        if let stranger = applied.keys.sorted().first(where: { !known.contains($0) }) {
            let parts = stranger.split(separator: "/", maxSplits: 1).map(String.init)
            throw MigrationError.unknown(source: parts[0], name: parts[1])
        }
        var pending: [Migration] = []
        for migration in migrations {
            switch applied["\(migration.source)/\(migration.name)"] {
            case nil: pending.append(migration)
            case migration.checksum: continue
            default: throw MigrationError.edited(migration)
            }
        }
        return pending
    }
}
