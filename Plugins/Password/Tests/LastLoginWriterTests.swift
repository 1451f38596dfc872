import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import Logging
@testable import PasswordPlugin
import Synchronization
import Testing

/// `last_login_at` written behind the logins, in PostgreSQL: what an app's
/// logins note meanwhile is one statement, the latest time of each user
/// wins, and a write that fails is neither the login's error nor the end of
/// the next write.
@Suite struct LastLoginWriterTests {
    /// The writes a writer asked for, in order; each goes to PostgreSQL unless `failing` is set.
    final class Writes: Sendable {
        let asked = Mutex<[[String: Date]]>([])
        let failing = Atomic(false)

        func write(_ times: [String: Date], to users: any PasswordUserStore, in appID: AppID) async throws {
            asked.withLock { $0.append(times) }
            if failing.load(ordering: .relaxed) { throw TestFailure("the database is away") }
            try await users.recordLogins(times, in: appID)
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func withUsers(
        _ count: Int, _ body: @Sendable (any PasswordUserStore, AppID, [String]) async throws -> Void
    ) async throws {
        try await TestGateway.with(plugins: .passwordTests) { gateway in
            let appID = try await gateway.createPasswordApp().appID
            let users = gateway.pluginServices.passwordUsers
            let ids = (0..<count).map { "user-\($0)" }
            let hash = PasswordUserStoreContractTests.oldHash
            _ = try await users.upsert(
                ids.map { PasswordUserRecord(userID: $0, hash: hash, profile: UserProfile([:]), disabled: false) }, in: appID,
                by: UserChangeOrigin(requestID: "last-login", actor: nil)
            ) { _ in AuditEvent(appID: appID, event: "users added", outcome: .success, requestID: "last-login") }
            try await body(users, appID, ids)
        }
    }

    /// A writer that waits an hour, so only a flush writes, with what it asks of `writes`.
    static func flushedWriter(_ appID: AppID, _ users: any PasswordUserStore, _ writes: Writes) -> (LastLoginWriter, PendingLastLogins) {
        let pending = PendingLastLogins()
        let writer = LastLoginWriter(appID: appID, pending: pending, delay: .seconds(3600), logger: Logger(label: "test")) {
            try await writes.write($0, to: users, in: appID)
        }
        return (writer, pending)
    }

    static func lastLogin(of userID: String, in appID: AppID, _ users: any PasswordUserStore) async throws -> Date? {
        try await users.find(userID, in: appID)?.lastLoginAt
    }

    @Test func theLoginsOfOneSpanShareOneWriteAndTheLatestTimeOfEachUserWins() async throws {
        try await Self.withUsers(50) { users, appID, ids in
            let writes = Writes()
            let (writer, pending) = Self.flushedWriter(appID, users, writes)
            let start = Date().addingTimeInterval(-100)
            // Each user signs in twice, from 100 tasks at once, the later login noted first for half of them.
            await withTaskGroup(of: Void.self) { group in
                for (index, id) in ids.enumerated() {
                    let (first, second) = (start.addingTimeInterval(Double(index)), start.addingTimeInterval(Double(index) + 0.5))
                    group.addTask { writer.note(id, at: index % 2 == 0 ? first : second) }
                    group.addTask { writer.note(id, at: index % 2 == 0 ? second : first) }
                }
            }
            #expect(writes.asked.withLock { $0.isEmpty }, "nothing is written before the delay or a flush")
            await pending.flushAll()
            await pending.flushAll()
            let asked = writes.asked.withLock { $0 }
            #expect(asked.count == 1, "one statement for every login noted, and nothing left for a second flush")
            #expect(asked.first?.count == 50)
            for (index, id) in ids.enumerated() {
                let stored = try #require(try await Self.lastLogin(of: id, in: appID, users))
                #expect(abs(stored.timeIntervalSince(start.addingTimeInterval(Double(index) + 0.5))) < 0.000_002, "\(id)")
            }
        }
    }

    @Test func aFailedWriteIsOnlyLoggedAndTheNextLoginIsWritten() async throws {
        try await Self.withUsers(2) { users, appID, ids in
            let writes = Writes()
            let (writer, pending) = Self.flushedWriter(appID, users, writes)
            writes.failing.store(true, ordering: .relaxed)
            writer.note(ids[0])
            await pending.flushAll()
            #expect(writes.asked.withLock { $0.count } == 1)
            let unwritten = try await Self.lastLogin(of: ids[0], in: appID, users)
            #expect(unwritten == nil)

            writes.failing.store(false, ordering: .relaxed)
            writer.note(ids[1])
            await pending.flushAll()
            #expect(writes.asked.withLock { $0.map { Set($0.keys) } } == [[ids[0]], [ids[1]]], "the failed notes are dropped")
            let written = try await Self.lastLogin(of: ids[1], in: appID, users)
            #expect(written != nil)
        }
    }

    /// Without a flush, the delay alone writes: the write is awaited, not slept for.
    @Test func theDelayWritesOnItsOwn() async throws {
        try await Self.withUsers(1) { users, appID, ids in
            let (written, writtenSignal) = AsyncStream.makeStream(of: Void.self)
            let pending = PendingLastLogins()
            let writer = LastLoginWriter(appID: appID, pending: pending, delay: .milliseconds(10), logger: Logger(label: "test")) {
                defer { writtenSignal.yield() }  // a failed write too, so the test fails instead of waiting
                try await users.recordLogins($0, in: appID)
            }
            writer.note(ids[0])
            for await _ in written { break }
            let stored = try await Self.lastLogin(of: ids[0], in: appID, users)
            #expect(stored != nil)
        }
    }
}
