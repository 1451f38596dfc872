import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Synchronization
import Testing

/// The maintenance pass under the load it meets in production: millions of
/// ended sessions go in short statements, and an old audit partition goes
/// without ever making a token's row wait, even while a long read of the
/// trail (an export, a deep page) holds it.
@Suite struct AuditMaintenanceTests {
    static let logger = TestDatabase.logger

    static func createApp(_ client: PostgresClient) async throws -> UUID {
        let app = UUID()
        try await client.query(
            """
            INSERT INTO apps (app_id, name, environment, provider_id, credential_types, plugins)
            VALUES (\(app), 'maintenance', 'development', \(UUID()), '{static}', '{"static": {"allow_any_user": true}}')
            """, logger: logger)
        return app
    }

    /// Every DELETE's size, as PostgreSQL saw it: a statement trigger writes each one down.
    static func countDeletes(on table: String, _ client: PostgresClient) async throws {
        try await client.query("CREATE TABLE delete_sizes (rows bigint NOT NULL)", logger: logger)
        try await client.query(
            """
            CREATE FUNCTION note_delete_size() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO delete_sizes SELECT count(*) FROM gone; RETURN NULL; END $$
            """, logger: logger)
        try await client.query(
            "CREATE TRIGGER note_delete_size AFTER DELETE ON \(unescaped: table) REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION note_delete_size()",
            logger: logger)
    }

    @Test func endedSessionsGoInShortStatementsAndTheLiveOnesStay() async throws {
        try await TestDatabase.with { client, _ in
            let app = try await Self.createApp(client)
            let ended = AuditMaintenance.deleteChunk * 2 + 345
            try await client.query(
                """
                INSERT INTO sessions (app_id, session_id, user_id, credential_type, auth_time, created_at, last_used_at,
                                      idle_expires_at, expires_at, generation, token_sha256)
                SELECT \(app), gen_random_uuid(), 'u' || n, 'static', now() - interval '90 days', now() - interval '90 days',
                       now() - interval '90 days',
                       CASE WHEN n <= \(ended) THEN now() - interval '40 days' ELSE now() + interval '1 day' END,
                       CASE WHEN n <= \(ended) THEN now() - interval '40 days' ELSE now() + interval '30 days' END,
                       0, sha256(('s' || n)::bytea)
                FROM generate_series(1, \(ended + 10)) AS n
                """, logger: Self.logger)
            try await Self.countDeletes(on: "sessions", client)

            let pass = try await AuditMaintenance(client: client, logger: Self.logger, retentionDays: nil).runOnce()

            #expect(pass.deleted.first { $0.table == "sessions" }?.rows == ended)
            let left = try await client.query("SELECT count(*) FROM sessions", logger: Self.logger).collect()
            #expect(try left.first?.decode(Int.self) == 10)
            let sizes = try await client.query("SELECT rows FROM delete_sizes", logger: Self.logger).collect().map { try $0.decode(Int.self) }
            #expect(sizes.reduce(0, +) == ended)
            #expect(sizes.max() ?? 0 <= AuditMaintenance.deleteChunk, "one statement deleted \(sizes.max() ?? 0) rows")
            #expect(sizes.count == 3, "\(sizes)")
        }
    }

    /// `CREATE TABLE … PARTITION OF` and `DROP TABLE` of a partition each
    /// needed an ACCESS EXCLUSIVE lock on `audit_events`: queued behind a long
    /// read, they held every insert behind them (this test timed out on the
    /// first). A month ahead is now attached and an old one detached
    /// concurrently: the read holds up the maintenance alone.
    @Test func anOldPartitionGoesWhileALongReadHoldsTheTrailAndRowsKeepGoingIn() async throws {
        try await TestDatabase.with { client, _ in
            try await client.query("SELECT audit_events_ensure_partitions('2020-01-01'::date, 0)", logger: Self.logger)
            let old = try #require(ISO8601DateFormatter().date(from: "2020-03-15T12:00:00Z"))
            try await client.query(
                "INSERT INTO audit_events (app_id, occurred_at, event, outcome, request_id) VALUES (\(AuditEvent.noApp), \(old), 'token.denied', 'failure', 'old')",
                logger: Self.logger)
            let readerHolds = AsyncStream<Void>.makeStream()
            let readerMayEnd = AsyncStream<Void>.makeStream()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        try await connection.query("BEGIN", logger: Self.logger)
                        _ = try await connection.query("SELECT count(*) FROM audit_events", logger: Self.logger).collect()
                        readerHolds.continuation.yield()
                        for await _ in readerMayEnd.stream { break }
                        try await connection.query("COMMIT", logger: Self.logger)
                    }
                }
                for await _ in readerHolds.stream { break }
                let maintenance = Task {
                    try await AuditMaintenance(client: client, logger: Self.logger, retentionDays: 365).runOnce()
                }
                // The detach waits for the reader.
                let deadline = ContinuousClock.now + .seconds(20)
                while true {
                    let waiting = try await client.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'ALTER TABLE audit_events DETACH%' AND wait_event_type = 'Lock'",
                        logger: Self.logger
                    ).collect()
                    if try waiting.first?.decode(Int.self) == 1 { break }
                    try #require(ContinuousClock.now < deadline, "the detach never waited for the reader")
                    try await Task.sleep(for: .milliseconds(20))
                }
                // A token's row goes in meanwhile; before, it queued behind the drop until the read ended.
                _ = try await withTimeout(.seconds(5)) {
                    try await client.query(
                        "INSERT INTO audit_events (app_id, occurred_at, event, outcome, request_id) VALUES (\(AuditEvent.noApp), now(), 'token.issued', 'success', 'during')",
                        logger: Self.logger)
                }
                readerMayEnd.continuation.yield()
                let pass = try await maintenance.value
                #expect(pass.droppedPartitions.contains("audit_events_2020_03"))
                try await group.waitForAll()
            }
            let partitions = try await client.query(
                "SELECT count(*) FROM pg_class WHERE relname = 'audit_events_2020_03'", logger: Self.logger
            ).collect()
            #expect(try partitions.first?.decode(Int.self) == 0)
            let rows = try await client.query("SELECT request_id FROM audit_events", logger: Self.logger).collect()
            #expect(try rows.map { try $0.decode(String.self) } == ["during"])
            // The pass made the month furthest ahead while the read held the trail (migrations make two).
            let ahead = try await client.query(
                """
                SELECT to_regclass('audit_events_' || to_char(now() + make_interval(months => \(AuditMaintenance.monthsAhead)::int), 'YYYY_MM'))::text
                """, logger: Self.logger
            ).collect()
            #expect(try ahead.first?.decode(String?.self) != nil)
        }
    }

    /// Every replica runs the pass: two at once drop the partitions, neither fails
    /// (two detaching one partition deadlocked, 40P01, in one run of three).
    @Test func twoReplicasPassesDropThePartitionsOnce() async throws {
        try await TestDatabase.with { client, _ in
            try await client.query("SELECT audit_events_ensure_partitions('2019-01-01'::date, 0)", logger: Self.logger)
            async let first = AuditMaintenance(client: client, logger: Self.logger, retentionDays: 365).runOnce()
            async let second = AuditMaintenance(client: client, logger: Self.logger, retentionDays: 365).runOnce()
            let passes = try await [first, second]
            #expect(Set(passes.flatMap(\.droppedPartitions)).contains("audit_events_2019_06"))
            let left = try await client.query(
                "SELECT count(*) FROM pg_class WHERE relname LIKE 'audit\\_events\\_2019\\_%'", logger: Self.logger
            ).collect()
            #expect(try left.first?.decode(Int.self) == 0)
        }
    }
}
