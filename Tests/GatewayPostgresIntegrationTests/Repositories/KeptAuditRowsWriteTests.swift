import Foundation
import GatewayCore
@testable import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// Rows written late from the backlog keep the time they were made, and do
/// not repeat a row whose first attempt committed after all.
@Suite struct KeptAuditRowsWriteTests {
    @Test func keptRowsKeepTheirTimeAndSkipRequestsAlreadyWritten() async throws {
        try await TestDatabase.with { client, _ in
            let appID = AppID(uuid: UUID())
            func denial(_ requestID: String) -> AuditEvent {
                var event = AuditEvent(
                    appID: appID, event: "token.denied", outcome: .failure, reason: "unavailable", userID: "ada",
                    credentialType: "password", requestID: requestID, detail: ["policy": "ip"])
                event.clientIP = "192.0.2.1"
                return event
            }
            // The first attempt at "late" committed after the gateway had stopped waiting for it.
            try await PostgresAuditLog(client: client, logger: TestDatabase.logger).record(denial("late"))
            let madeAt = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded())
            try await KeptAuditRowsWrite.run(
                [.init(event: denial("late"), occurredAt: Date()), .init(event: denial("kept"), occurredAt: madeAt)],
                client: client, statementTimeout: .seconds(10), logger: TestDatabase.logger)

            let rows = try await client.query(
                """
                SELECT request_id, occurred_at, reason, user_id, host(client_ip), detail::text FROM audit_events
                ORDER BY request_id
                """, logger: TestDatabase.logger)
            var found: [(String, Date, String, String, String, String)] = []
            for try await row in rows.decode((String, Date, String, String, String, String).self) { found.append(row) }
            #expect(found.map(\.0) == ["kept", "late"], "one row a request")
            let kept = try #require(found.first)
            #expect(kept.1 == madeAt)
            #expect([kept.2, kept.3, kept.4, kept.5] == ["unavailable", "ada", "192.0.2.1", #"{"policy": "ip"}"#])
        }
    }
}
