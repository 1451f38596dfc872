public import GatewayCore
public import Logging
public import PostgresNIO

/// Applies migrations in order, each in its own transaction, under a
/// Postgres advisory lock so concurrent runners (several replicas starting at
/// once) apply each file exactly once. Applied files are recorded with a
/// checksum; a changed applied file stops the run.
///
/// Each migration waits at most ``lockTimeout`` for a lock (PostgreSQL's
/// `lock_timeout`): a table a token request writes is never locked for
/// longer while the migration queues behind a long transaction, since the
/// requests would queue behind the migration. A migration that timed out
/// is rolled back and tried again, ``lockAttempts`` times in all.
///
/// A database a newer release migrated is served as long as every
/// migration this binary does not know only expanded the schema
/// (``MigrationReview``, recorded as `schema_migrations.expands_only`).
public struct MigrationRunner: Sendable {
    /// Key of the advisory lock held while migrating ("idgw" + "migr").
    static let lockKey: Int64 = 0x6964_6777_6d69_6772

    private let client: PostgresClient
    private let logger: Logger
    public let lockTimeout: Duration
    public let lockAttempts: Int

    public init(client: PostgresClient, logger: Logger, lockTimeout: Duration = .seconds(2), lockAttempts: Int = 5) {
        self.client = client
        self.logger = logger
        self.lockTimeout = lockTimeout
        self.lockAttempts = max(1, lockAttempts)
    }

    /// Applies every migration not applied yet and returns their names
    /// (`source/name`), in order. A second run returns an empty list.
    /// Throws, applying nothing, when the database holds a migration this
    /// binary does not know that did more than expand the schema.
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

    /// What the database holds against `migrations`: what would run, and
    /// what a newer release applied. Throws when an applied one was edited.
    public func status(_ migrations: [Migration]) async throws -> SchemaStatus {
        try await client.withConnection { connection in
            try await ensureHistoryTable(on: connection)
            return try await status(of: migrations, on: connection)
        }
    }

    private func applyMissing(_ migrations: [Migration], on connection: PostgresConnection) async throws -> [String] {
        try await ensureHistoryTable(on: connection)
        let status = try await status(of: migrations, on: connection)
        if let contraction = status.newer.first(where: { !$0.expandsOnly }) {
            throw MigrationError.tooNew(contraction.name)
        }
        var appliedNow: [String] = []
        for migration in status.pending {
            try await applyWaitingForLocks(migration, on: connection)
            logger.info("applied migration", metadata: ["migration": "\(migration.source)/\(migration.name)"])
            appliedNow.append("\(migration.source)/\(migration.name)")
        }
        return appliedNow
    }

    /// Applies `migration`, again while it fails for a lock it waited for too long.
    private func applyWaitingForLocks(_ migration: Migration, on connection: PostgresConnection) async throws {
        for attempt in 1...lockAttempts {
            do {
                try await apply(migration, on: connection)
                return
            } catch let error as MigrationError where error.waitedForALock && attempt < lockAttempts {
                logger.warning(
                    "migration waited too long for a lock; rolled back, trying again",
                    metadata: [
                        "migration": "\(migration.source)/\(migration.name)", "attempt": "\(attempt)",
                        "lock_timeout_ms": "\(lockTimeout.milliseconds)",
                    ])
                try await Task.sleep(for: .milliseconds(250 * attempt))
            }
        }
    }

    private func apply(_ migration: Migration, on connection: PostgresConnection) async throws {
        let timeout = PostgresQuery(unsafeSQL: "SET lock_timeout = '\(lockTimeout.milliseconds)ms'")
        if MigrationReview.runsOutsideATransaction(migration) {
            // CREATE INDEX CONCURRENTLY cannot run in a transaction: each statement on its own, then the record.
            try await connection.tracedQuery(timeout, logger: logger)
            do {
                for statement in SQLStatementSplitter.split(migration.sql) {
                    try await applyStatement(statement, of: migration, on: connection)
                }
                try await record(migration, on: connection)
            } catch {
                _ = try? await connection.tracedQuery("RESET lock_timeout", logger: logger)
                throw error
            }
            try await connection.tracedQuery("RESET lock_timeout", logger: logger)
            return
        }
        do {
            try await connection.transaction(logger: logger) { connection in
                try await connection.tracedQuery(
                    PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = '\(lockTimeout.milliseconds)ms'"), logger: logger)
                for statement in SQLStatementSplitter.split(migration.sql) {
                    try await applyStatement(statement, of: migration, on: connection)
                }
                try await record(migration, on: connection)
            }
        } catch let error as TransactionError {
            // What the migration's statement said (a lock waited for too long is tried again), not the wrapper.
            throw error.closureError ?? error
        }
    }

    private func applyStatement(_ statement: String, of migration: Migration, on connection: PostgresConnection) async throws {
        do {
            try await connection.tracedQuery(PostgresQuery(unsafeSQL: statement), logger: logger)
        } catch {
            throw MigrationError.failed(migration, statement: statement, error: error, lockTimeout: lockTimeout)
        }
    }

    private func record(_ migration: Migration, on connection: PostgresConnection) async throws {
        try await connection.tracedQuery(
            """
            INSERT INTO schema_migrations (source, name, checksum, expands_only)
            VALUES (\(migration.source), \(migration.name), \(migration.checksum), \(MigrationReview.expandsOnly(migration)))
            """, logger: logger)
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
        // Whether the migration only expanded the schema: what an older binary reads to know it may still
        // serve the database. Rows from before it was kept are null.
        let column = try await connection.tracedQuery(
            """
            SELECT count(*)::int FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'expands_only'
            """, logger: logger)
        var present = 0
        for count in try column.decode(Int.self) { present = count }
        if present == 0 {
            try await connection.tracedQuery("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS expands_only boolean", logger: logger)
        }
    }

    private func status(of migrations: [Migration], on connection: PostgresConnection) async throws -> SchemaStatus {
        var applied: [String: (checksum: String, expandsOnly: Bool?)] = [:]
        let rows = try await connection.tracedQuery(
            "SELECT source, name, checksum, expands_only FROM schema_migrations", logger: logger)
        for (source, name, checksum, expandsOnly) in try rows.decode((String, String, String, Bool?).self) {
            applied["\(source)/\(name)"] = (checksum, expandsOnly)
        }
        let known = Set(migrations.map { "\($0.source)/\($0.name)" })
        let newer = applied.keys.sorted().filter { !known.contains($0) }.map {
            SchemaStatus.Newer(name: $0, expandsOnly: applied[$0]?.expandsOnly == true)
        }
        var pending: [Migration] = []
        for migration in migrations {
            switch applied["\(migration.source)/\(migration.name)"]?.checksum {
            case nil: pending.append(migration)
            case migration.checksum: continue
            default: throw MigrationError.edited(migration)
            }
        }
        return SchemaStatus(pending: pending, newer: newer)
    }
}

/// A database's schema against one binary's migrations.
public struct SchemaStatus: Sendable, Equatable {
    /// A migration a newer release applied, and whether it only expanded the schema.
    public struct Newer: Sendable, Equatable {
        public let name: String
        public let expandsOnly: Bool
    }

    /// This binary's migrations the database lacks: what `migrate` would apply.
    public let pending: [Migration]
    /// What a newer release applied that this binary does not know.
    public let newer: [Newer]

    /// Whether this binary can serve the database as it is: nothing
    /// pending, and whatever is newer only expanded it.
    public var canServe: Bool { pending.isEmpty && newer.allSatisfy(\.expandsOnly) }

    /// One sentence for an operator: current, behind, or ahead (compatible or not).
    public var summary: String {
        if let contraction = newer.first(where: { !$0.expandsOnly }) {
            return "too new for this binary: \(contraction.name), applied by a newer release, removes or changes what this "
                + "release reads; run a release that knows it"
        }
        if !pending.isEmpty {
            let names = pending.map { "\($0.source)/\($0.name)" }.joined(separator: ", ")
            return "behind by \(pending.count) migration(s) this binary would apply: \(names)"
        }
        if !newer.isEmpty {
            return "ahead by \(newer.count) migration(s) a newer release applied, each only expanding the schema: "
                + "this binary can serve it"
        }
        return "current"
    }
}
