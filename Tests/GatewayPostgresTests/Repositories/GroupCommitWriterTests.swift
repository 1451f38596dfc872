import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// Batched counter touches read as if the requests had run one by one, audit
/// rows batched with them are written, and an admission's row only when its
/// counters allow.
@Suite struct GroupCommitWriterTests {
    @Test func concurrentTouchesOfOneCounterEachSeeTheirOwnCount() async throws {
        try await TestDatabase.with { client, _ in
            let counters = GroupCommitWriter(client: client, logger: TestDatabase.logger)
            let policy = RateLimitPolicy(name: "ip", limit: 1000, periodSeconds: 60, counting: .everyRequest)
            let failures = RateLimitPolicy(name: "user_failures", limit: 5, periodSeconds: 60, counting: .failures)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await counters.run() }
                let seen = try await withThrowingTaskGroup(of: [GroupCommitWriter.Counts].self) { touches in
                    for _ in 0..<60 {
                        touches.addTask {
                            try await counters.touch(
                                [
                                    .init(window: SlidingWindow(policy: policy, now: now), subject: "10.0.0.1", increment: 1),
                                    .init(window: SlidingWindow(policy: failures, now: now), subject: "alice", increment: 0),
                                ], appID: appID)
                        }
                    }
                    return try await touches.reduce(into: []) { $0.append($1) }
                }
                // Every request saw a different count of the shared counter, 1 through 60.
                #expect(seen.map { $0[0].current }.sorted() == Array(1...60))
                // The read-only counter was never added to.
                #expect(seen.allSatisfy { $0[1].current == 0 })
                // Another app's counter is its own.
                let other = try await counters.touch(
                    [.init(window: SlidingWindow(policy: policy, now: now), subject: "10.0.0.1", increment: 1)],
                    appID: AppID(uuid: UUID()))
                #expect(other.map(\.current) == [1])
                group.cancelAll()
            }
        }
    }

    @Test func auditRowsAndCounterTouchesShareBatches() async throws {
        try await TestDatabase.with { client, _ in
            let writer = GroupCommitWriter(client: client, logger: TestDatabase.logger)
            let policy = RateLimitPolicy(name: "app", limit: 1000, periodSeconds: 60, counting: .everyRequest)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            let prefix = UUID().uuidString
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writer.run() }
                try await withThrowingTaskGroup(of: Void.self) { requests in
                    for index in 0..<50 {
                        requests.addTask {
                            _ = try await writer.touch(
                                [.init(window: SlidingWindow(policy: policy, now: now), subject: "*", increment: 1)],
                                appID: appID)
                            try await writer.record(
                                AuditEvent(
                                    appID: appID, event: "token.denied", outcome: .failure, reason: "rate_limited",
                                    requestID: "\(prefix)-\(index)", detail: ["policy": "app", "note": "say \"hi\"\n"]))
                        }
                    }
                    try await requests.waitForAll()
                }
                let statistics = writer.statistics
                #expect(statistics.events == 50)
                #expect(statistics.touches == 50)
                #expect(statistics.batches < 100, "\(statistics.batches) batches for 100 items")
                group.cancelAll()
            }
            let rows = try await client.query(
                """
                SELECT count(*)::int8, count(DISTINCT request_id)::int8, min(detail->>'note'), min(user_id), min(client_ip::text)
                FROM audit_events WHERE request_id LIKE \(prefix + "-%") AND app_id = \(appID.uuid)
                """, logger: TestDatabase.logger)
            for try await (count, distinct, note, userID, clientIP) in rows.decode((Int64, Int64, String?, String?, String?).self) {
                #expect(count == 50)
                #expect(distinct == 50)
                #expect(note == "say \"hi\"\n")
                // Absent values are stored as NULL, not as empty strings.
                #expect(userID == nil)
                #expect(clientIP == nil)
            }
        }
    }

    @Test func anAdmissionRecordsItsEventOnlyWhenEveryCounterAllows() async throws {
        try await TestDatabase.with { client, _ in
            let writer = GroupCommitWriter(client: client, logger: TestDatabase.logger)
            let perApp = RateLimitPolicy(name: "app", limit: 3, periodSeconds: 60, counting: .everyRequest)
            let failures = RateLimitPolicy(name: "user_failures", limit: 2, periodSeconds: 900, counting: .failures)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            let prefix = UUID().lowercasedText
            func event(_ name: String) -> AuditEvent {
                AuditEvent(appID: appID, event: "token.issued", outcome: .success, requestID: "\(prefix)-\(name)")
            }
            func touches(user: String) -> [GroupCommitWriter.Touch] {
                [
                    .init(window: SlidingWindow(policy: perApp, now: now), subject: "*", increment: 1),
                    .init(window: SlidingWindow(policy: failures, now: now), subject: user, increment: 0),
                ]
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writer.run() }
                // Two failures already counted for mallory: her next attempt is refused whatever the app's room.
                _ = try await writer.touch(
                    [.init(window: SlidingWindow(policy: failures, now: now), subject: "mallory", increment: 2)], appID: appID)
                let mallory = try await writer.admit(touches(user: "mallory"), appID: appID, recording: event("mallory"))
                #expect(!mallory.admitted)
                #expect(mallory.counts.map(\.current) == [1, 2])
                #expect(mallory.counts.map(\.previous) == [0, 0])

                // Six admissions and six plain rows at once, sharing batches: the app's
                // limit of 3 (one already used by mallory) admits two, and every plain row is written.
                let admitted = try await withThrowingTaskGroup(of: (String, Bool).self) { requests in
                    for index in 0..<6 {
                        requests.addTask {
                            let admission = try await writer.admit(
                                touches(user: "user\(index)"), appID: appID, recording: event("admit-\(index)"))
                            #expect(admission.admitted == (admission.counts[0].current <= 3))
                            return ("admit-\(index)", admission.admitted)
                        }
                        requests.addTask {
                            try await writer.record(
                                AuditEvent(appID: appID, event: "token.denied", outcome: .failure, requestID: "\(prefix)-plain-\(index)"))
                            return ("plain-\(index)", true)
                        }
                    }
                    return try await requests.reduce(into: Set<String>()) { if $1.1 { $0.insert("\(prefix)-\($1.0)") } }
                }
                #expect(admitted.filter { $0.contains("admit") }.count == 2)
                let statistics = writer.statistics
                #expect(statistics.admissions == 7)
                #expect(statistics.events == 6 + 2)
                group.cancelAll()

                let rows = try await client.query(
                    "SELECT request_id FROM audit_events WHERE request_id LIKE \(prefix + "-%")", logger: TestDatabase.logger)
                var written = Set<String>()
                for try await requestID in rows.decode(String.self) { written.insert(requestID) }
                #expect(written == admitted)
            }
        }
    }
}
