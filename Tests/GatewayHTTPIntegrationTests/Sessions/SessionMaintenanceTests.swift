import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// What maintenance deletes of the sessions table (the flows themselves are
/// tested over memory, in GatewayHTTPUnitTests' SessionFlowTests).
@Suite struct SessionMaintenanceTests {
    /// Ended sessions stay listed for 30 days after their revocation or
    /// absolute end, then maintenance deletes them; an idle-ended one waits
    /// for its absolute end too (the index maintenance reads has no column a
    /// refresh changes).
    @Test func maintenanceDeletesSessionsThirtyDaysAfterTheyEnd() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            var sessions: [String: UUID] = [:]
            for name in ["live", "revoked-long-ago", "revoked-lately", "expired-long-ago", "idle-long-ago"] {
                sessions[name] = UUID(uuidString: try #require(try await gateway.signIn(app).sessionID))!
            }
            let (client, logger) = (gateway.client, TestDatabase.logger)
            func set(_ name: String, _ assignments: String) async throws {
                try await client.query(
                    PostgresQuery(unsafeSQL: "UPDATE sessions SET \(assignments) WHERE session_id = '\(sessions[name]!)'"),
                    logger: logger)
            }
            try await set("revoked-long-ago", "revoked_at = now() - interval '31 days'")
            try await set("revoked-lately", "revoked_at = now() - interval '29 days'")
            try await set(
                "expired-long-ago",
                "expires_at = now() - interval '31 days', idle_expires_at = now() - interval '31 days', created_at = now() - interval '100 days'")
            try await set("idle-long-ago", "idle_expires_at = now() - interval '40 days'")
            try await AuditMaintenance(client: client, logger: logger, retentionDays: nil).runOnce()
            var left: Set<UUID> = []
            for try await id in try await client.query("SELECT session_id FROM sessions", logger: logger).decode(UUID.self) {
                left.insert(id)
            }
            #expect(left == Set(["live", "revoked-lately", "idle-long-ago"].map { sessions[$0]! }))
        }
    }
}
