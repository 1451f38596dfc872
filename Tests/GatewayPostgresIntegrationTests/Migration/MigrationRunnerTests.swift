import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import Logging
import PostgresNIO
import Testing

@Suite struct MigrationRunnerTests {
    let logger = TestDatabase.logger
    let first = Migration(source: "test", name: "0001_first.sql", sql: "CREATE TABLE first (id int PRIMARY KEY);")
    let second = Migration(
        source: "test", name: "0002_second.sql",
        sql: "CREATE TABLE second (id int); INSERT INTO second VALUES (1); INSERT INTO second VALUES (2);")

    @Test func appliesInOrderAndASecondRunIsANoOp() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            let firstRun = try await runner.run([first, second])
            let secondRun = try await runner.run([first, second])
            let pending = try await runner.status([first, second]).pending
            #expect(firstRun == ["test/0001_first.sql", "test/0002_second.sql"])
            #expect(secondRun.isEmpty)
            #expect(pending.isEmpty)
            let rows = try await client.query("SELECT count(*) FROM second", logger: logger)
            for try await count in rows.decode(Int.self) { #expect(count == 2) }
        }
    }

    @Test func theCoreSchemaAppliesOnAnEmptyDatabase() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            let applied = try await runner.run(Migration.core)
            let pending = try await runner.status(Migration.core).pending
            #expect(applied.count == Migration.core.count)
            #expect(pending.isEmpty)
        }
    }

    /// What databases in the field recorded in `schema_migrations` for the core
    /// schema (names and SHA-256 of the files, as of build 7b45d37, before the
    /// files moved to the top-level `Migrations/`). The runner refuses a
    /// database whose recorded file changed or vanished, so these must stay
    /// exactly as they are; new files only add to the end.
    static let recordedCoreMigrations = [
        "0001_initial.sql e46b14a50fdf671575ae5fc80418c455051b46d864077b9ad8bd7a82ba55fb79",
        "0002_admin.sql 799b0f822e1edfb1d27184f1c7d8f0adcabc8cb2195d36d2df48e798a93e885d",
        "0003_rate_limits_and_partitioned_audit.sql c38298bb2018609a046c936235281cae10658967d64b63f5fd658d265081ccf6",
        "0004_rate_limit_reservations.sql b5bfd41ebea4b39ea09961d2e1fb37180d66e2186960c545f14c79be412e4c75",
        "0005_logged_rate_limit_counters.sql f66ee4f3bc9dfdeaadf211932b7aa701d5f18040d2a450f80dca92fcc3d0b634",
    ]

    @Test func aDatabaseMigratedByAnEarlierBuildMigratesOnUnchanged() async throws {
        let embedded = Migration.core.map { "\($0.name) \($0.checksum)" }
        #expect(Array(embedded.prefix(Self.recordedCoreMigrations.count)) == Self.recordedCoreMigrations)
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            // This build records what earlier builds recorded, row for row.
            _ = try await runner.run(Migration.core)
            let rows = try await client.query(
                "SELECT name || ' ' || checksum FROM schema_migrations WHERE source = 'core' ORDER BY name", logger: logger)
            var recorded: [String] = []
            for try await row in rows.decode(String.self) { recorded.append(row) }
            #expect(Array(recorded.prefix(Self.recordedCoreMigrations.count)) == Self.recordedCoreMigrations)
            #expect(try await runner.status(Migration.core).pending.isEmpty)
        }
    }

    /// An UNLOGGED table is emptied by a crash and missing on every standby:
    /// rate-limit counters were, and each failover gave every client a fresh
    /// budget (Benchmarks/ha/run). Nothing the gateway stores may be.
    @Test func noTableIsUnloggedSoAFailoverKeepsEveryRow() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            _ = try await MigrationRunner(client: client, logger: logger).run(Migration.core)
            let rows = try await client.query(
                """
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND c.relpersistence = 'u'
                """, logger: logger)
            var unlogged: [String] = []
            for try await name in rows.decode(String.self) { unlogged.append(name) }
            #expect(unlogged == [])
            let counters = try await client.query(
                "SELECT relpersistence::text FROM pg_class WHERE relname = 'rate_limit_counters'", logger: logger)
            for try await persistence in counters.decode(String.self) { #expect(persistence == "p") }
        }
    }

    @Test func refusesAnAppliedFileThatWasEdited() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            try await runner.run([first])
            let edited = Migration(source: "test", name: first.name, sql: "CREATE TABLE first (id bigint PRIMARY KEY);")
            await #expect {
                try await runner.run([edited, second])
            } throws: { error in
                "\(error)".contains("test/0001_first.sql was edited after it was applied")
            }
            // Nothing after the refused file ran.
            let pending = try await runner.status([first, second]).pending
            #expect(pending == [second])
        }
    }

    /// A rolling upgrade: the new release migrated, the old one's replicas
    /// still serve, since what they do not know only added.
    @Test func servesADatabaseANewerReleaseOnlyExpanded() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            try await runner.run([first, second])
            let status = try await runner.status([first])
            #expect(status.pending.isEmpty)
            #expect(status.newer.map(\.name) == ["test/0002_second.sql"])
            #expect(status.newer.map(\.expandsOnly) == [true])
            #expect(status.canServe)
            #expect(status.summary.contains("ahead by 1 migration(s)"))
            #expect(try await runner.run([first]).isEmpty)
        }
    }

    @Test func refusesADatabaseANewerReleaseContracted() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            let contraction = Migration(
                source: "test", name: "0003_contract.sql",
                sql: "\(MigrationReview.contractionMarker) second, unread since 0002\nDROP TABLE second;")
            try await runner.run([first, second, contraction])
            let status = try await runner.status([first, second])
            #expect(!status.canServe)
            #expect(status.summary.contains("too new for this binary: test/0003_contract.sql"))
            await #expect {
                try await runner.run([first, second])
            } throws: { error in
                "\(error)".contains("test/0003_contract.sql applied, which this binary does not know and which removes")
            }
        }
    }

    /// A migration queued behind a long transaction would make every token
    /// request that writes the table queue behind it: it gives up after its
    /// lock timeout, rolls back and tries again, and says what to look for.
    @Test func aMigrationWaitsForALockNoLongerThanItsTimeout() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            try await MigrationRunner(client: client, logger: logger).run([first])
            let alter = Migration(source: "test", name: "0002_alter.sql", sql: "ALTER TABLE first ADD COLUMN note text;")
            try await TestDatabase.withClient(url) { holder in
                try await holder.withConnection { connection in
                    _ = try await connection.query("BEGIN", logger: logger)
                    _ = try await connection.query("LOCK TABLE first IN ACCESS SHARE MODE", logger: logger)
                    let runner = MigrationRunner(client: client, logger: logger, lockTimeout: .milliseconds(50), lockAttempts: 2)
                    await #expect {
                        try await runner.run([first, alter])
                    } throws: { error in
                        (error as? MigrationError)?.waitedForALock == true && "\(error)".contains("waited more than its lock timeout (50 ms)")
                    }
                    // While it waited, readers of the table were not stopped for longer than the timeout; after, not at all.
                    let rows = try await client.query("SELECT count(*)::int FROM first", logger: logger)
                    for try await count in rows.decode(Int.self) { #expect(count == 0) }
                    #expect(try await runner.status([first, alter]).pending == [alter])
                    _ = try await connection.query("COMMIT", logger: logger)
                }
            }
            #expect(try await MigrationRunner(client: client, logger: logger).run([first, alter]) == ["test/0002_alter.sql"])
        }
    }

    /// `CREATE INDEX CONCURRENTLY` cannot run in a transaction: a migration
    /// marked so runs statement by statement, and is recorded once done.
    @Test func anIndexBuiltConcurrentlyRunsOutsideATransaction() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            let index = Migration(
                source: "test", name: "0002_index.sql",
                sql: "\(MigrationReview.outsideATransactionMarker)\nCREATE INDEX CONCURRENTLY IF NOT EXISTS first_by_id ON first (id);")
            #expect(try await runner.run([first, index]) == ["test/0001_first.sql", "test/0002_index.sql"])
            let rows = try await client.query("SELECT to_regclass('first_by_id') IS NOT NULL", logger: logger)
            for try await present in rows.decode(Bool.self) { #expect(present) }
            let recorded = try await client.query(
                "SELECT expands_only FROM schema_migrations WHERE name = '0002_index.sql'", logger: logger)
            for try await expands in recorded.decode(Bool.self) { #expect(expands) }
        }
    }

    @Test func aFailingMigrationRollsBackWhole() async throws {
        try await TestDatabase.with(migrations: []) { client, _ in
            let runner = MigrationRunner(client: client, logger: logger)
            let broken = Migration(
                source: "test", name: "0001_broken.sql", sql: "CREATE TABLE half (id int); SELECT no_such_column FROM half;")
            await #expect {
                try await runner.run([broken])
            } throws: { error in
                "\(error)".contains("no_such_column") && "\(error)".contains("rolled back")
            }
            let rows = try await client.query("SELECT to_regclass('half') IS NULL", logger: logger)
            for try await absent in rows.decode(Bool.self) { #expect(absent) }
            let pending = try await runner.status([broken]).pending
            #expect(pending == [broken])
        }
    }

    @Test func concurrentRunnersApplyEachFileOnce() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let slow = Migration(
                source: "test", name: "0001_slow.sql",
                sql: "CREATE TABLE counted (n int); SELECT pg_sleep(0.3); INSERT INTO counted VALUES (1);")
            let results = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await TestDatabase.withClient(url) { client in
                            try await MigrationRunner(client: client, logger: logger).run([slow, second])
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.flatMap { $0 }.sorted() == ["test/0001_slow.sql", "test/0002_second.sql"])
            try await TestDatabase.withClient(url) { client in
                let rows = try await client.query("SELECT count(*) FROM counted", logger: logger)
                for try await count in rows.decode(Int.self) { #expect(count == 1) }
            }
        }
    }
}
