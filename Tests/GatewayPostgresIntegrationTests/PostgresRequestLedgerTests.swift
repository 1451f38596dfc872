import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// Batched counter touches read as if the requests had run one by one, audit
/// rows batched with them are written, and an admission's row only when its
/// counters allow.
@Suite struct PostgresRequestLedgerTests {
    /// What these tests count and batch is not about time: a full run on two
    /// cores may keep this process from the writer for seconds.
    static let timeout = Duration.seconds(60)

    @Test func concurrentTouchesOfOneCounterEachSeeTheirOwnCount() async throws {
        try await TestDatabase.with { client, _ in
            let counters = PostgresRequestLedger(client: client, logger: TestDatabase.logger, timeout: Self.timeout)
            let policy = RateLimitPolicy(name: "ip", limit: 1000, periodSeconds: 60, counting: .everyRequest)
            let failures = RateLimitPolicy(name: "user_failures", limit: 5, periodSeconds: 60, counting: .failures)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await counters.run() }
                let seen = try await withThrowingTaskGroup(of: [CounterReading].self) { touches in
                    for _ in 0..<60 {
                        touches.addTask {
                            try await counters.count(
                                [
                                    .init(appID: appID, window: SlidingWindow(policy: policy, now: now), subject: "10.0.0.1", mode: .count),
                                    .init(appID: appID, window: SlidingWindow(policy: failures, now: now), subject: "alice", mode: .read),
                                ])
                        }
                    }
                    return try await touches.reduce(into: []) { $0.append($1) }
                }
                // Every request saw a different count of the shared counter, 1 through 60.
                #expect(seen.map { $0[0].current }.sorted() == Array(1...60))
                // The read-only counter was never added to.
                #expect(seen.allSatisfy { $0[1].current == 0 })
                // Another app's counter is its own.
                let other = try await counters.count(
                    [.init(appID: AppID(uuid: UUID()), window: SlidingWindow(policy: policy, now: now), subject: "10.0.0.1", mode: .count)])
                #expect(other.map(\.current) == [1])
                group.cancelAll()
            }
        }
    }

    @Test func auditRowsAndCounterTouchesShareBatches() async throws {
        try await TestDatabase.with { client, _ in
            let writer = PostgresRequestLedger(client: client, logger: TestDatabase.logger, timeout: Self.timeout)
            let policy = RateLimitPolicy(name: "app", limit: 1000, periodSeconds: 60, counting: .everyRequest)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            let prefix = UUID().uuidString
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writer.run() }
                try await withThrowingTaskGroup(of: Void.self) { requests in
                    for index in 0..<50 {
                        requests.addTask {
                            _ = try await writer.count(
                                [.init(appID: appID, window: SlidingWindow(policy: policy, now: now), subject: "*", mode: .count)])
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

    /// Two gateway instances on one database, each spacing its batches
    /// (`commitInterval`), admit together exactly the limit out of many
    /// parallel requests, and every admission, and nothing else, has its row.
    @Test func twoInstancesSpacingTheirBatchesAdmitExactlyTheLimit() async throws {
        try await TestDatabase.with { client, _ in
            let instances = (0..<2).map { _ in
                PostgresRequestLedger(
                    client: client, logger: TestDatabase.logger, timeout: Self.timeout, commitInterval: .milliseconds(20))
            }
            let limit = 25
            let perApp = RateLimitPolicy(name: "app", limit: limit, periodSeconds: 60, counting: .everyRequest)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            let prefix = UUID().lowercasedText
            try await withThrowingTaskGroup(of: Void.self) { group in
                for instance in instances { group.addTask { try await instance.run() } }
                let answers = try await withThrowingTaskGroup(of: (String, Admission).self) { requests in
                    for index in 0..<120 {
                        requests.addTask {
                            let requestID = "\(prefix)-\(index)"
                            let admission = try await instances[index % 2].countAndRecord(
                                [.init(appID: appID, window: SlidingWindow(policy: perApp, now: now), subject: "*", mode: .count)],
                                ifAllowed: AuditEvent(appID: appID, event: "token.issued", outcome: .success, requestID: requestID))
                            return (requestID, admission)
                        }
                    }
                    return try await requests.reduce(into: []) { $0.append($1) }
                }
                let admitted = Set(answers.filter { $0.1.admitted }.map(\.0))
                #expect(admitted.count == limit)
                #expect(answers.map { $0.1.counts[0].current }.sorted() == Array(1...120), "each request saw its own count")
                #expect(instances.map { $0.statistics.batches }.reduce(0, +) < 120, "the batches were shared")
                group.cancelAll()

                let rows = try await client.query(
                    "SELECT request_id FROM audit_events WHERE request_id LIKE \(prefix + "-%")", logger: TestDatabase.logger)
                var written: [String] = []
                for try await requestID in rows.decode(String.self) { written.append(requestID) }
                #expect(written.count == limit && Set(written) == admitted)
            }
        }
    }

    @Test func anAdmissionRecordsItsEventOnlyWhenEveryCounterAllows() async throws {
        try await TestDatabase.with { client, _ in
            let writer = PostgresRequestLedger(client: client, logger: TestDatabase.logger, timeout: Self.timeout)
            let perApp = RateLimitPolicy(name: "app", limit: 3, periodSeconds: 60, counting: .everyRequest)
            let failures = RateLimitPolicy(name: "user_failures", limit: 2, periodSeconds: 900, counting: .failures)
            let appID = AppID(uuid: UUID())
            let now = Date().timeIntervalSince1970
            let prefix = UUID().lowercasedText
            func event(_ name: String) -> AuditEvent {
                AuditEvent(appID: appID, event: "token.issued", outcome: .success, requestID: "\(prefix)-\(name)")
            }
            func touches(user: String) -> [CounterTouch] {
                [
                    .init(appID: appID, window: SlidingWindow(policy: perApp, now: now), subject: "*", mode: .count),
                    .init(appID: appID, window: SlidingWindow(policy: failures, now: now), subject: user, mode: .read),
                ]
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writer.run() }
                // Two failures already counted for mallory: her next attempt is refused whatever the app's room.
                let reservation = CounterTouch(
                    appID: appID, window: SlidingWindow(policy: failures, now: now), subject: "mallory", mode: .reserve)
                _ = try await writer.count([reservation, reservation])
                let mallory = try await writer.countAndRecord(touches(user: "mallory"), ifAllowed: event("mallory"))
                #expect(!mallory.admitted)
                #expect(mallory.counts.map(\.current) == [1, 2])
                #expect(mallory.counts.map(\.previous) == [0, 0])

                // Six admissions and six plain rows at once, sharing batches: the app's
                // limit of 3 (one already used by mallory) admits two, and every plain row is written.
                let admitted = try await withThrowingTaskGroup(of: (String, Bool).self) { requests in
                    for index in 0..<6 {
                        requests.addTask {
                            let admission = try await writer.countAndRecord(
                                touches(user: "user\(index)"), ifAllowed: event("admit-\(index)"))
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

    @Test func reservationsNeverGrantMoreThanTheLimitAndReleasesGiveRoomBack() async throws {
        try await TestDatabase.with { client, _ in
            let writer = PostgresRequestLedger(client: client, logger: TestDatabase.logger, timeout: Self.timeout)
            let failures = RateLimitPolicy(name: "user_failures", limit: 10, periodSeconds: 60, counting: .failures)
            let appID = AppID(uuid: UUID())
            // A window long past, so the test's clock cannot cross its edge.
            let previousStart = (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 - 600
            let previous = SlidingWindow(policy: failures, now: previousStart + 1)
            let halfway = SlidingWindow(policy: failures, now: previousStart + 90)
            func reservation(_ window: SlidingWindow) -> CounterTouch {
                .init(appID: appID, window: window, subject: "alice", mode: .reserve)
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await writer.run() }
                func reserveInParallel(_ count: Int, in window: SlidingWindow) async throws -> [CounterReading] {
                    try await withThrowingTaskGroup(of: CounterReading.self) { requests in
                        for _ in 0..<count { requests.addTask { try await writer.count([reservation(window)])[0] } }
                        return try await requests.reduce(into: []) { $0.append($1) }
                    }
                }
                // 120 at once against a limit of 10: exactly 10 granted, each seeing its own count.
                let first = try await reserveInParallel(120, in: previous)
                #expect(first.filter(\.allowed).map(\.current).sorted() == Array(1...10))
                #expect(first.filter { !$0.allowed }.allSatisfy { $0.current == 10 })

                // Three released: three more granted, not one beyond.
                for _ in 0..<3 { _ = try await writer.count([reservation(previous).release]) }
                let second = try await reserveInParallel(20, in: previous)
                #expect(second.filter(\.allowed).count == 3)

                // Halfway through the next window the previous 10 weigh 5: 5 more fit.
                let third = try await reserveInParallel(20, in: halfway)
                #expect(third.filter(\.allowed).count == 5)
                #expect(third.allSatisfy { $0.previous == 10 })

                // A release never takes a counter below zero.
                let other = CounterTouch(appID: appID, window: halfway, subject: "bob", mode: .release)
                #expect(try await writer.count([other, other]).map(\.current) == [0, 0])
                let bob = try await writer.count([.init(appID: appID, window: halfway, subject: "bob", mode: .reserve)])
                #expect(bob == [.init(current: 1, previous: 0, allowed: true, granted: 1)])
                group.cancelAll()
            }
        }
    }
}
