import Foundation
import GatewayCore
@testable import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// A row PostgreSQL refuses (here: U+0000, which no text column can hold)
/// must not hold back the rows written with it, nor be retried forever.
@Suite struct UnstorableRowTests {
    static func event(_ requestID: String, credentialType: String = "static") -> AuditEvent {
        AuditEvent(
            appID: AppID(uuid: UUID()), event: "token.denied", outcome: .failure, reason: "bad_password",
            credentialType: credentialType, requestID: requestID)
    }

    static func credentialTypes(_ client: PostgresClient, prefix: String) async throws -> [String: String] {
        let rows = try await client.query(
            "SELECT request_id, credential_type FROM audit_events WHERE request_id LIKE \(prefix + "%")",
            logger: TestDatabase.logger)
        var types: [String: String] = [:]
        for try await (requestID, type) in rows.decode((String, String).self) { types[requestID] = type }
        return types
    }

    @Test func aRefusedRowDoesNotFailTheRowsBatchedWithIt() async throws {
        try await TestDatabase.with { client, _ in
            let writer = PostgresRequestLedger(client: client, logger: TestDatabase.logger, timeout: .seconds(60), concurrency: 1)
            let prefix = UUID().lowercasedText
            try await withThrowingTaskGroup(of: Void.self) { requests in
                for index in 0..<30 {
                    requests.addTask { try await writer.record(Self.event("\(prefix)-\(index)")) }
                }
                requests.addTask { await writer.recordEventually(Self.event("\(prefix)-poison", credentialType: "st\u{0}atic")) }
                // All queued before the writer runs: they go to PostgreSQL as one batch.
                while writer.queuedCount < 31 { await Task.yield() }
                requests.addTask { try await writer.run() }
                for _ in 0..<31 { try await requests.next() }
                #expect(writer.statistics.batches == 1)
                #expect(writer.statistics.events == 31)
                #expect(writer.keptCount == 0)
                requests.cancelAll()
            }
            let types = try await Self.credentialTypes(client, prefix: prefix)
            #expect(types.count == 31)
            #expect(types["\(prefix)-poison"] == "st\u{FFFD}atic")
        }
    }

    @Test func theBacklogWritesAroundARefusedRowAndNeverRetriesIt() async throws {
        try await TestDatabase.with { client, _ in
            let prefix = UUID().lowercasedText
            let backlog = AuditBacklog(
                capacity: 10, maximumBatch: 10, retryInterval: .milliseconds(5), logger: TestDatabase.logger
            ) { rows in
                try await KeptAuditRowsWrite.run(rows, client: client, statementTimeout: .seconds(10), logger: TestDatabase.logger)
            }
            backlog.keep(Self.event("\(prefix)-1"), occurredAt: Date())
            backlog.keep(Self.event("\(prefix)-poison", credentialType: "\u{0}"), occurredAt: Date())
            backlog.keep(Self.event("\(prefix)-2"), occurredAt: Date())
            #expect(await backlog.flush() == 0)
            #expect(backlog.count == 0)
            let types = try await Self.credentialTypes(client, prefix: prefix)
            #expect(types == ["\(prefix)-1": "static", "\(prefix)-poison": "\u{FFFD}", "\(prefix)-2": "static"])
        }
    }
}
