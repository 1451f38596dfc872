import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// The gateway's connections commit to disk whatever the server's defaults
/// say (how an undurable server is named: `DurabilityVerdictTests`).
@Suite struct DurabilityCheckTests {
    @Test func connectionsCommitSynchronouslyWhateverTheDatabaseDefault() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            try await client.query(
                """
                DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = off', current_database()); END $$
                """, logger: TestDatabase.logger)
            // A new connection: it gets the database's default unless it asks for more.
            let settings = try await TestDatabase.withClient(url) { fresh in
                try await DurabilityCheck.read(client: fresh, logger: TestDatabase.logger)
            }
            #expect(settings.synchronousCommit == "on")
            #expect(!settings.problems.contains { $0.contains("synchronous_commit") })
        }
    }
}
