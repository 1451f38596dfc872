import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Testing

/// The audit trail under load, over HTTP, across partitions, and read back.
@Suite struct AuditTrailTests {
    @Test func concurrentRequestsEachGetTheirRowInSharedBatches() async throws {
        try await TestGateway.with(rateLimits: RateLimitSettings(isEnabled: false)) { gateway in
            let app = try await gateway.createApp()
            let requestIDs = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await gateway.test {
                            try await $0.postJSON(aliceRequest(app, nonce: "nonce-\(index)"))
                        }
                        #expect(response.status == .ok)
                        return response.headers[HTTPField.Name("x-request-id")!]!
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            let rows = try await gateway.auditRows()
            #expect(rows.count == 200)
            #expect(Set(rows.map(\.requestID)) == requestIDs)
            #expect(rows.allSatisfy { $0.event == "token.issued" })
            let statistics = gateway.ledger.statistics
            #expect(statistics.events == 200)
            #expect(statistics.batches < 200, "group commit wrote \(statistics.batches) batches for 200 events")
        }
    }

    /// Issue 76.9: a member of the wrong type (a number refresh token,
    /// null, an object, a number nonce, a number password) is 400 and leaves
    /// its row in the app's trail, one for each request, as every other
    /// denial does (it was written under the nil app id, which no app's
    /// audit list shows).
    @Test func malformedFieldsLeaveTheirRow() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            let appID = app.appID.uuid.uuidString
            let bodies: [String] = [
                #"{"app_id":"\#(appID)","nonce":"n","credentials":{"type":"refresh_token","refresh_token":12345}}"#,
                #"{"app_id":"\#(appID)","nonce":"n","credentials":{"type":"refresh_token","refresh_token":null}}"#,
                #"{"app_id":"\#(appID)","nonce":"n","credentials":{"type":"refresh_token","refresh_token":{"a":"b"}}}"#,
                #"{"app_id":"\#(appID)","user_id":"alice","nonce":42,"credentials":{"type":"static","password":"wonderland"}}"#,
                #"{"app_id":"\#(appID)","user_id":"alice","nonce":"n","credentials":{"type":"static","password":7}}"#,
                #"{"app_id":"\#(appID)","user_id":["alice"],"nonce":"n","credentials":{"type":"static","password":"wonderland"}}"#,
            ]
            var requestIDs: [String] = []
            for body in bodies {
                let response = try await gateway.test {
                    try await $0.post(contentType: "application/json", body: body)
                }
                #expect(response.status == .badRequest, "\(body): \(text(response))")
                requestIDs.append(try #require(response.headers[HTTPField.Name("x-request-id")!]))
            }
            for (body, requestID) in zip(bodies, requestIDs) {
                let rows = try await gateway.auditRowsOnceWritten(requestID: requestID, event: "token.denied")
                #expect(rows.count == 1 && rows.first?.reason == "invalid_request", "\(body): \(rows.map(\.text))")
                // In the app's own trail, not under the nil app of a request that named none.
                #expect(rows.first?.text.contains(app.appID.uuid.uuidString.lowercased()) == true, "\(body): \(rows.map(\.text))")
            }
        }
    }

    @Test func theClientAddressComesFromTrustedProxiesOnly() async throws {
        for (trusted, expected) in [([CIDR]()), [CIDR("127.0.0.1/32")!]].map({ ($0, $0.isEmpty ? "127.0.0.1" : "198.51.100.7") }) {
            try await TestGateway.with(rateLimits: RateLimitSettings(trustedProxies: trusted)) { gateway in
                let app = try await gateway.createApp()
                let response = try await gateway.application.test(.live) { client in
                    try await client.postJSON(
                        aliceRequest(app),
                        headers: [HTTPField.Name("x-forwarded-for")!: "198.51.100.7", .userAgent: "TestApp/1.0 " + String(repeating: "x", count: 400)])
                }
                #expect(response.status == .ok)
                let rows = try await gateway.client.query(
                    "SELECT host(client_ip), length(user_agent) FROM audit_events", logger: TestDatabase.logger)
                for try await (address, agentLength) in rows.decode((String, Int).self) {
                    #expect(address == expected)
                    #expect(agentLength == 256)
                }
            }
        }
    }

    /// The late commit docs/limits-and-audit.md describes: the issued row's statement waits past the database timeout, so
    /// the token is withheld (503) and the row commits later. The denial the client got is kept in memory
    /// while its own write waits, and written once PostgreSQL lets it: the trail explains the issued row.
    ///
    /// The row commits late only if its attempt held a connection before the timeout (from then on the attempt
    /// is not cancelled; before 2026-11-27 a cancellation landing in the rows' iteration rolled it back, and
    /// this test failed one run in two). On a loaded machine a new connection or a stalled pool took longer
    /// than 1 s (two full runs here), so two connections are opened first and the timeout is 5 s.
    ///
    /// With no limit to refuse it, the token is signed while its row waits (`TokenSignatures`): the
    /// signature is made, and dropped with the 503.
    @Test func aTokenWithheldWhileItsRowWaitsLeavesADenialBesideTheLateRow() async throws {
        let signatures = SignatureCount()
        try await TestGateway.with(
            rateLimits: RateLimitSettings(isEnabled: false), auditWriteTimeout: .seconds(5), signatures: signatures
        ) { gateway in
            let app = try await gateway.createApp()
            let ledger = gateway.ledger
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask { _ = try await gateway.client.query("SELECT pg_sleep(0.2)", logger: TestDatabase.logger) }
                }
                try await group.waitForAll()
            }

            let request = aliceRequest(app)
            let (response, kept) = try await gateway.whileAuditWritesWait {
                (try await gateway.test { try await $0.postJSON(request) }, ledger.keptCount)
            }
            #expect(response.status == .serviceUnavailable)
            #expect(try errorBody(response)["error"] as? String == "unavailable")
            #expect(!String(buffer: response.body).contains("identity_token"))
            #expect(signatures.value == 1, "signed beside the waiting row, and withheld")
            #expect(kept == 1, "the denial waits in memory")
            let requestID = try #require(response.headers[HTTPField.Name("x-request-id")!])

            // Both rows, in either order: the late row's COMMIT follows its statement by a round trip, so the
            // denial's write may commit first.
            _ = try await gateway.auditRowsOnceWritten(requestID: requestID, event: "token.denied")
            let rows = try await gateway.auditRowsOnceWritten(requestID: requestID, event: "token.issued")
            #expect(rows.filter { $0.event == "token.issued" }.map(\.userID) == ["alice"], "the late row")
            let denials = rows.filter { $0.event == "token.denied" }
            // Once, unless the kept row's write raced the first attempt as both waited for the lock.
            #expect((1...2).contains(denials.count))
            #expect(denials.allSatisfy { $0.reason == "unavailable" && $0.userID == "alice" })
            // The kept row leaves memory just after its write commits, which is when the rows above became visible.
            let drained = ContinuousClock.now + .seconds(30)
            while ledger.keptCount > 0 && ContinuousClock.now < drained { await Task.yield() }
            #expect(ledger.keptCount == 0)
            #expect(ledger.statistics.lost == 0)
        }
    }

    /// Rows that wait in memory while PostgreSQL answers (here: writes wait
    /// for a lock) take the replica out of rotation once they are stale.
    @Test func aStaleBacklogMakesTheReplicaUnready() async throws {
        // Without limits: their counters share the audit rows' statement, which the lock holds too.
        try await TestGateway.with(rateLimits: RateLimitSettings(isEnabled: false), auditWriteTimeout: .seconds(1)) { gateway in
            let app = try await gateway.createApp()
            gateway.dependencies.options.readiness.markStarted()
            gateway.dependencies.options.readiness.setListening(true)
            let router = Router(context: GatewayRequestContext.self)
            HealthController(
                readiness: gateway.dependencies.options.readiness,
                storage: PostgresStorageHealth(client: gateway.client, ledger: gateway.ledger, logger: gateway.dependencies.logger),
                staleBacklogAfter: .zero
            ).addRoutes(to: router)
            let health = Application(router: router)
            @Sendable func readiness() async throws -> (HTTPResponse.Status, String) {
                try await health.test(.router) { client in
                    let response = try await client.execute(uri: "/readyz", method: .get)
                    return (response.status, String(buffer: response.body))
                }
            }
            let (status, body) = try await gateway.whileAuditWritesWait {
                let wrong = try await gateway.test {
                    try await $0.postJSON(["app_id": app.appID.description, "user_id": "alice", "nonce": "n",
                                           "credentials": ["type": "static", "password": "guess"]])
                }
                #expect(wrong.status == .unauthorized)
                #expect(gateway.ledger.keptCount == 1)
                return try await readiness()
            }
            #expect(status == .serviceUnavailable)
            #expect(body.contains("audit rows kept in memory"))
            while gateway.ledger.keptCount > 0 { try await Task.sleep(for: .milliseconds(20)) }  // the backlog's own retry schedule
            // Drained, the backlog no longer keeps the replica out (on a loaded machine `SELECT 1` may, briefly).
            #expect(try await !readiness().1.contains("audit rows kept"))
        }
    }

    @Test func retentionDropsWholeOldPartitionsAndKeepsTheRest() async throws {
        try await TestGateway.with { gateway in
            let client = gateway.client
            let logger = TestDatabase.logger
            try await client.query("SELECT audit_events_ensure_partitions('2020-01-01'::date, 0)", logger: logger)
            let old = try #require(ISO8601DateFormatter().date(from: "2020-03-15T12:00:00Z"))
            try await client.query(
                """
                INSERT INTO audit_events (app_id, occurred_at, event, outcome, request_id)
                VALUES (\(AuditEvent.noApp), \(old), 'token.denied', 'failure', 'old'),
                       (\(AuditEvent.noApp), now(), 'token.denied', 'failure', 'recent')
                """, logger: logger)
            let dropped = try await AuditMaintenance(client: client, logger: logger, retentionDays: 365).runOnce().droppedPartitions
            #expect(dropped.contains("audit_events_2020_03"))
            #expect(!dropped.contains { $0.hasSuffix(Date().formatted(.iso8601.year().month()).replacingOccurrences(of: "-", with: "_")) })
            let rows = try await gateway.auditRows()
            #expect(rows.map(\.requestID) == ["recent"])
            // Partitions stand ready for the months ahead.
            let ahead = try await client.query(
                "SELECT count(*) FROM pg_inherits WHERE inhparent = 'audit_events'::regclass", logger: logger)
            for try await count in ahead.decode(Int.self) { #expect(count >= AuditMaintenance.monthsAhead + 1) }
        }
    }

    @Test func pagesReturnEveryRowOnceWhileNewRowsArrive() async throws {
        try await TestGateway.with(rateLimits: RateLimitSettings(isEnabled: false)) { gateway in
            let app = try await gateway.createApp()
            let other = try await gateway.createApp()
            for index in 0..<25 { _ = try await gateway.test { try await $0.postJSON(aliceRequest(app, nonce: "a\(index)")) } }
            _ = try await gateway.test { try await $0.postJSON(aliceRequest(other)) }
            let token = try await gateway.adminToken(.app(app.appID))
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let path = "/admin/v1/apps/\(app.appID)/audit_events?limit=10" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try jsonObject(try await gateway.admin(.get, path, token: token))
                let items = page["items"] as? [[String: Any]] ?? []
                seen += items.compactMap { $0["request_id"] as? String }
                #expect(items.allSatisfy { $0["app_id"] as? String == app.appID.description })
                cursor = page["next_cursor"] as? String
                pages += 1
                // New rows keep arriving between pages; they are newer than any cursor.
                let nonce = "late\(pages)"
                _ = try await gateway.test { try await $0.postJSON(aliceRequest(app, nonce: nonce)) }
            } while cursor != nil && pages < 10
            #expect(seen.count == 25)
            #expect(Set(seen).count == 25)

            let filtered = try jsonObject(
                try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/audit_events?event=token.issued&user_id=alice&limit=1", token: token))
            #expect((filtered["items"] as? [[String: Any]])?.count == 1)
            let otherApp = try await gateway.admin(.get, "/admin/v1/apps/\(other.appID)/audit_events", token: token)
            #expect(otherApp.status == .notFound)
            let everyApp = try await gateway.admin(.get, "/admin/v1/audit_events", token: token)
            #expect(everyApp.status == .forbidden)
            let bad = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/audit_events?from=yesterday", token: token)
            #expect(bad.status == .badRequest)
        }
    }

    @Test func ndjsonStreamsTheWholeRange() async throws {
        try await TestGateway.with(rateLimits: RateLimitSettings(isEnabled: false)) { gateway in
            let app = try await gateway.createApp()
            for index in 0..<30 { _ = try await gateway.test { try await $0.postJSON(aliceRequest(app, nonce: "s\(index)")) } }
            let token = try await gateway.adminToken(.operator)
            let response = try await gateway.test {
                try await $0.execute(
                    uri: "/admin/v1/audit_events?app_id=\(app.appID)&outcome=success", method: .get,
                    headers: [.authorization: "Bearer \(token)", .accept: "application/x-ndjson"])
            }
            #expect(response.headers[.contentType] == "application/x-ndjson")
            let lines = text(response).split(separator: "\n")
            #expect(lines.count == 30)
            for line in lines {
                let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect(event["event"] as? String == "token.issued")
            }
        }
    }
}
