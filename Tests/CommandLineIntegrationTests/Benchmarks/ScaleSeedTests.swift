import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPostgres
import GatewayRuntime
import GatewayTestSupport
import PostgresNIO
import Testing

/// The scale benchmark's seeding (Benchmarks/scale/seed.sql) on every
/// migration the gateway runs, at a thousandth of its size: each table gets
/// its share, the audit rows land in their monthly partitions, and what it
/// writes satisfies every constraint (a column a migration adds or tightens
/// fails here, not at the next hour-long measurement).
@Suite struct ScaleSeedTests {
    @Test func theSeedingFillsEveryTableInItsShare() async throws {
        try await TestDatabase.with(migrations: Migration.core + PluginRegistry.installed.migrations) { client, url in
            var apps: [UUID] = []
            for name in ["password", "refresh"] {
                let rows = try await client.query(
                    "INSERT INTO apps (app_id, name, environment, provider_id) VALUES (gen_random_uuid(), \(name), 'development', gen_random_uuid()) RETURNING app_id",
                    logger: TestDatabase.logger)
                for try await id in rows.decode(UUID.self) { apps.append(id) }
            }
            let run = try await GatewayProcess.runProgram(
                "/usr/bin/psql",
                [url, "-q", "-v", "scale=0.001", "-v", "big_app=\(apps[0].lowercasedText)", "-v", "session_app=\(apps[1].lowercasedText)",
                 "-f", Repository.path("Benchmarks/scale/seed.sql")],
                environment: ProcessInfo.processInfo.environment)
            #expect(run.status == 0, "\(run.output)")
            func count(_ sql: String) async throws -> Int {
                for try await value in try await client.query(PostgresQuery(unsafeSQL: sql), logger: TestDatabase.logger).decode(Int64.self) {
                    return Int(value)
                }
                return -1
            }
            #expect(try await count("SELECT count(*) FROM apps") == 12)
            #expect(try await count("SELECT count(*) FROM password_users") == 5000)
            #expect(try await count("SELECT count(*) FROM password_users WHERE app_id = '\(apps[0].lowercasedText)'") == 2000)
            #expect(try await count("SELECT count(*) FROM sessions") == 10000)
            #expect(try await count("SELECT count(*) FROM sessions WHERE app_id = '\(apps[1].lowercasedText)'") == 1000)
            #expect(try await count("SELECT count(*) FROM sessions WHERE revoked_at IS NULL AND expires_at > now()") == 6000)
            #expect(try await count("SELECT count(*) FROM phone_numbers") == 1000)
            #expect(try await count("SELECT count(*) FROM passkeys") == 200)
            #expect(try await count("SELECT count(*) FROM second_factors") == 200)
            #expect(try await count("SELECT count(*) FROM audit_events") == 30000)
            #expect(try await count("SELECT count(*) FROM audit_events WHERE app_id = '\(apps[0].lowercasedText)'") == 10000)
            // Spread over at least six monthly partitions.
            #expect(try await count("SELECT count(DISTINCT tableoid) FROM audit_events") >= 6)
        }
    }
}
