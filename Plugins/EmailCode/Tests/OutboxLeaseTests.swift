import Foundation
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayRuntime
import GatewayTestSupport
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// The outbox's leases in PostgreSQL: a message is one worker's at a time,
/// a worker that dies mid-delivery leaves it to another once its lease
/// ends, and the dead worker's late finish changes nothing.
@Suite struct OutboxLeaseTests {
    @Test func aDeadWorkersMessageGoesToTheNextAndItsLateFinishIsRefused() async throws {
        // The email plugin's worker runs beside, on its own channel; this channel's store is driven by hand.
        try await TestGateway.with(plugins: try .emailCodeTests(caFile: nil)) { gateway in
            let app = try await gateway.createApp()
            let codes = PostgresCodeStore<EmailCodeTable>(client: gateway.client, logger: TestDatabase.logger)
            let outbox = PostgresOutbox(client: gateway.client, logger: TestDatabase.logger)
            let address = try #require(EmailAddress("ada@example.com"))
            let message = OutboxMessage(channel: "lease-test", payload: [1, 2, 3], requestID: "r-1")
            #expect(
                try await codes.storeUnlessTooSoon(
                    code: Array(repeating: 1, count: 32), for: address, in: app.appID, attempts: 3, lifetimeSeconds: 600,
                    resendAfterSeconds: 60, queueing: message) == nil)

            let first = try await outbox.claim(channel: "lease-test", limit: 10, lease: .seconds(60))
            #expect(first.map(\.id) == [message.id])
            #expect(first.first?.attempt == 1)
            #expect(first.first?.requestID == "r-1")
            // While the lease lasts, nobody else gets it; another channel never does.
            #expect(try await outbox.claim(channel: "lease-test", limit: 10, lease: .seconds(60)).isEmpty)
            #expect(try await outbox.claim(channel: "email", limit: 10, lease: .seconds(60)).isEmpty)

            // The worker died: its lease runs out (moved into the past rather than waited for).
            try await gateway.client.query("UPDATE outbox SET leased_until = now() - interval '1 second'", logger: TestDatabase.logger)
            let second = try #require(try await outbox.claim(channel: "lease-test", limit: 10, lease: .seconds(60)).first)
            #expect(second.attempt == 2)
            let event = AuditEvent(appID: app.appID, event: "email_code.delivered", outcome: .success, requestID: "r-1")
            // The late finish of the first lease and the second's, in one batch: only the second lands.
            let late = OutboxAttemptEnd(try #require(first.first), .delivered(reply: "250 late"), row: event)
            #expect(try await outbox.finish([late, OutboxAttemptEnd(second, .delivered(reply: "250 ok"), row: event)]) == [false, true])
            let rows = try await gateway.client.query(
                "SELECT state, last_reply, payload IS NULL FROM outbox", logger: TestDatabase.logger)
            var states: [(String, String, Bool)] = []
            for try await row in rows.decode((String, String, Bool).self) { states.append(row) }
            #expect(states.count == 1)
            #expect(states.first?.0 == "delivered")
            #expect(states.first?.1 == "250 ok")
            #expect(states.first?.2 == true)
            #expect(try await gateway.auditRows().filter { $0.event == "email_code.delivered" }.count == 1)
        }
    }
}
