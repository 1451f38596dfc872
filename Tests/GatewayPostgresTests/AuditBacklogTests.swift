import Foundation
import GatewayCore
@testable import GatewayPostgres
import GatewayTestSupport
import Logging
import Synchronization
import Testing

/// Rows kept while PostgreSQL is away: written in order once it answers,
/// bounded, and counted when lost. A stand-in plays the database.
@Suite struct AuditBacklogTests {
    private struct Away: Error {}

    /// Fails while `isAway`, keeps the request ids of what it wrote, and reports every attempt's size.
    private final class StandInDatabase: Sendable {
        let isAway = Atomic(true)
        let written = Mutex<[String]>([])
        let attempts: AsyncStream<Int>
        private let attempt: AsyncStream<Int>.Continuation

        init() {
            (attempts, attempt) = AsyncStream.makeStream()
        }

        func write(_ rows: [AuditBacklog.Row]) throws {
            defer { attempt.yield(rows.count) }
            if isAway.load(ordering: .relaxed) { throw Away() }
            written.withLock { $0.append(contentsOf: rows.map(\.event.requestID)) }
        }
    }

    private static func backlog(
        _ database: StandInDatabase, capacity: Int = 100, maximumBatch: Int = 500, log: CapturedLog = CapturedLog()
    ) -> AuditBacklog {
        AuditBacklog(
            capacity: capacity, maximumBatch: maximumBatch, retryInterval: .milliseconds(5), logger: log.logger
        ) { try database.write($0) }
    }

    private static func denial(_ requestID: String) -> AuditEvent {
        AuditEvent(appID: AppID(uuid: UUID()), event: "token.denied", outcome: .failure, reason: "unavailable", requestID: requestID)
    }

    @Test func keptRowsAreWrittenOldestFirstOnceTheDatabaseAnswers() async throws {
        let database = StandInDatabase()
        let backlog = Self.backlog(database, maximumBatch: 2)
        let ids = (1...5).map { "request-\($0)" }
        for id in ids { backlog.keep(Self.denial(id), occurredAt: Date()) }
        #expect(backlog.count == 5)

        var sizes: [Int] = []
        await withDiscardingTaskGroup { group in
            group.addTask { await backlog.run() }
            var attempts = database.attempts.makeAsyncIterator()
            // Retried while away: nothing leaves the backlog.
            for _ in 0..<3 { sizes.append(await attempts.next() ?? 0) }
            #expect(backlog.count == 5)
            database.isAway.store(false, ordering: .relaxed)
            while backlog.count > 0, let size = await attempts.next() { sizes.append(size) }
            group.cancelAll()
        }
        #expect(database.written.withLock { $0 } == ids)
        #expect(sizes.allSatisfy { $0 == 2 || $0 == 1 }, "batches of at most two: \(sizes)")
        #expect(backlog.counts.written == 5)
        #expect(backlog.counts.lost == 0)
    }

    @Test func whatAFullBacklogCannotTakeIsCountedAndLoggedWhole() async throws {
        let database = StandInDatabase()
        let log = CapturedLog()
        let backlog = Self.backlog(database, capacity: 3, log: log)
        for index in 1...5 { backlog.keep(Self.denial("request-\(index)"), occurredAt: Date()) }
        #expect(backlog.count == 3)
        #expect(backlog.counts.lost == 2)
        #expect(Self.loggedAsLost(log) == ["request-4", "request-5"])
        // At shutdown, with the database still away, what is kept is lost too.
        #expect(await backlog.flush() == 3)
        #expect(backlog.count == 0)
        #expect(backlog.counts.lost == 5)
        #expect(Self.loggedAsLost(log) == ["request-4", "request-5", "request-1", "request-2", "request-3"])
        #expect(database.written.withLock { $0 }.isEmpty)
    }

    /// The request ids of rows logged whole, in order.
    private static func loggedAsLost(_ log: CapturedLog) -> [String] {
        log.text.split(separator: "\n").filter { $0.hasPrefix("error audit row lost") }.compactMap { line in
            line.firstRange(of: /request-[0-9]+/).map { String(line[$0]) }
        }
    }

    @Test func aLostRowIsLoggedAsOneJSONObjectWithTheTrailsColumns() throws {
        var event = Self.denial("request-1")
        event.userID = "ada \"the\" first"
        event.clientIP = "192.0.2.1"
        event.detail = ["policy": "ip"]
        let row = AuditBacklog.Row(event: event, occurredAt: Date(timeIntervalSince1970: 1_795_000_000.25))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(AuditBacklog.json(row).utf8)) as? [String: Any])
        #expect(json["occurred_at"] as? String == "2026-11-18T11:06:40.250Z")
        #expect(json["app_id"] as? String == event.appID?.uuid.lowercasedText)
        #expect(json["event"] as? String == "token.denied")
        #expect(json["outcome"] as? String == "failure")
        #expect(json["reason"] as? String == "unavailable")
        #expect(json["user_id"] as? String == "ada \"the\" first")
        #expect(json["client_ip"] as? String == "192.0.2.1")
        #expect(json["request_id"] as? String == "request-1")
        #expect(json["detail"] as? [String: String] == ["policy": "ip"])
        #expect(json["key_id"] == nil && json["actor"] == nil)
    }

    @Test func theLastFlushWritesEverythingWhenTheDatabaseIsBack() async throws {
        let database = StandInDatabase()
        database.isAway.store(false, ordering: .relaxed)
        let backlog = Self.backlog(database, maximumBatch: 2)
        for index in 1...3 { backlog.keep(Self.denial("request-\(index)"), occurredAt: Date()) }
        #expect(await backlog.flush() == 0)
        #expect(database.written.withLock { $0 } == ["request-1", "request-2", "request-3"])
        #expect(backlog.counts.written == 3)
    }
}
