import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// Replicas starting together each run audit maintenance on one database:
/// the partitions they find missing are created, and the old ones dropped,
/// once, and no replica's call fails (one that did ended its startup).
@Suite struct AuditPartitionRaceTests {
    static let callers = 8

    @Test func concurrentCallsCreateEachMissingPartitionOnceAndAllSucceed() async throws {
        try await TestDatabase.with { client, url in
            let before = try await Self.partitions(client)
            // Two years ahead: every caller finds the same twenty-odd months missing.
            let created = try await Self.concurrently(url) { caller in
                let rows = try await caller.query(
                    "SELECT audit_events_ensure_partitions(now()::date, 24)", logger: TestDatabase.logger
                ).collect()
                return try rows[0].decode(Int.self)
            }
            let after = try await Self.partitions(client)
            #expect(after.count > before.count + 20)
            #expect(created.reduce(0, +) == after.count - before.count, "\(created)")
        }
    }

    @Test func concurrentCallsDropEachOldPartitionOnceAndAllSucceed() async throws {
        try await TestDatabase.with { client, url in
            _ = try await client.query("SELECT audit_events_ensure_partitions('2020-01-01'::date, 0)", logger: TestDatabase.logger)
                .collect()
            let old = try await Self.partitions(client).filter { $0 < "audit_events_2024_01" }
            #expect(old.count == 48)
            let dropped = try await Self.concurrently(url) { caller in
                try await caller.query(
                    "SELECT audit_events_drop_partitions_before('2024-01-01')", logger: TestDatabase.logger
                ).collect().map { try $0.decode(String.self) }
            }
            #expect(dropped.flatMap { $0 }.sorted() == old)
            #expect(try await Self.partitions(client).filter { $0 < "audit_events_2024_01" }.isEmpty)
        }
    }

    /// `body` from `callers` clients of their own at once (as many replicas); every call must succeed.
    static func concurrently<Result: Sendable>(
        _ url: String, _ body: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: Result.self) { group in
            for _ in 0..<callers {
                group.addTask { try await TestDatabase.withClient(url) { try await body($0) } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    static func partitions(_ client: PostgresClient) async throws -> [String] {
        try await client.query(
            """
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'audit_events'::regclass ORDER BY 1
            """, logger: TestDatabase.logger
        ).collect().map { try $0.decode(String.self) }
    }
}
