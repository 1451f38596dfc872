import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
@testable import PasswordPlugin
import Testing

/// The password users in PostgreSQL and in memory give the same answers and
/// the same audit rows to one sequence of calls, so the plugin's tests that
/// run in memory test what runs in production. Each half fails if either
/// store changes an answer the other keeps.
@Suite struct PasswordUserStoreContractTests {
    @Test func inMemory() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { try await Self.sequence(on: $0) }
    }

    @Test func inPostgreSQL() async throws {
        try await TestGateway.with(plugins: .passwordTests) { try await Self.sequence(on: $0) }
    }

    static let oldHash = PasswordHash("$argon2id$v=19$m=8192,t=1,p=1$c29tZXNhbHQ$qLml5cbqFAO6YxVHhrSBHP0UWdxrIxkNcM8aMX3blzU")!
    static let newHash = PasswordHash("$argon2id$v=19$m=9216,t=2,p=1$c29tZXNhbHQ$qLml5cbqFAO6YxVHhrSBHP0UWdxrIxkNcM8aMX3blzU")!

    static func record(_ userID: String, firstName: String? = nil, hash: PasswordHash = oldHash) -> PasswordUserRecord {
        PasswordUserRecord(userID: userID, hash: hash, profile: UserProfile([.firstName: firstName]), disabled: false)
    }

    static func event(_ name: String, _ appID: AppID) -> AuditEvent {
        AuditEvent(appID: appID, event: name, outcome: .success, requestID: "contract")
    }

    /// What an upsert did to one user, without the changes' own ids.
    enum Upserted: Equatable {
        case created
        case replaced([UserChange.Kind])
        case addressTaken
    }

    static func sequence(on gateway: some GatewayUnderTest) async throws {
        let (app, other) = (try await gateway.createPasswordApp().appID, try await gateway.createPasswordApp().appID)
        let users = gateway.pluginServices.passwordUsers
        let origin = UserChangeOrigin(requestID: "contract", actor: nil)
        // Every change a write made, to hold against the journal at the end.
        var made: [UserChange] = []
        func upserted(_ records: [PasswordUserRecord], in appID: AppID) async throws -> [Upserted] {
            let outcomes = try await users.upsert(records, in: appID, by: origin) { event("upserted \($0.map(\.isCreated))", appID) }
            made += outcomes.flatMap(\.userChanges)
            #expect(outcomes.flatMap(\.userChanges).allSatisfy { $0.appID == appID && $0.requestID == "contract" })
            return outcomes.map { outcome in
                switch outcome {
                case .created: .created
                case .replaced(let changes): .replaced(changes.map(\.kind))
                case .addressTaken: .addressTaken
                }
            }
        }
        func ids(prefix: String = "", after: String? = nil, limit: Int = 10) async throws -> [String] {
            try await users.list(in: app, prefix: prefix, emailVerified: nil, after: after, limit: limit).map(\.userID)
        }

        // Created, then replaced; the answer says which, the audit row is made of it.
        let created = try await upserted([record("b"), record("ä"), record("a"), record("ab")], in: app)
        #expect(created == [.created, .created, .created, .created])
        #expect(
            try await upserted([record("a", firstName: "Ada"), record("c")], in: app) == [.replaced([]), .created],
            "the same hash again changes nothing others must hear")
        // What a replacement changes, measured against the row it replaced (issue 76.3: an import's too).
        var disabled = record("ab")
        disabled.disabled = true
        #expect(
            try await upserted([record("b", hash: newHash), disabled], in: app)
                == [.replaced([.passwordChanged]), .replaced([.disabled])])
        #expect(
            try await upserted([disabled, record("b", hash: newHash)], in: app) == [.replaced([]), .replaced([])],
            "still disabled, the same new hash: nothing new")
        var offboarded = record("c", hash: newHash)
        offboarded.disabled = true
        #expect(
            try await upserted([offboarded], in: app) == [.replaced([.disabled, .passwordChanged])],
            "disabled and another hash: both")
        _ = try await upserted([record("ab"), record("b"), record("c")], in: app)
        #expect(try await users.find("a", in: app)?.profile[.firstName] == "Ada")
        #expect(try await users.find("a", in: other) == nil, "another app has no such user")
        // Every profile field is stored and read back.
        var everyField = UserProfile()
        for field in ProfileField.allCases { everyField[field] = "the \(field.name) of p" }
        _ = try await upserted([PasswordUserRecord(userID: "p", hash: oldHash, profile: everyField, disabled: false)], in: other)
        #expect(try await users.find("p", in: other)?.profile == everyField)

        // An address belongs to one user: a write that gives it to another, or to two at once, is not made;
        // the holder sends it again unchanged, in any case.
        @Sendable func withEmail(_ userID: String, _ email: String?) -> PasswordUserRecord {
            PasswordUserRecord(userID: userID, hash: oldHash, profile: UserProfile([.email: email]), disabled: false)
        }
        #expect(try await upserted([withEmail("m1", "mail@example.com")], in: other) == [.created])
        #expect(try await upserted([withEmail("m2", "MAIL@example.com"), withEmail("m3", "m3@example.com")], in: other)
            == [.addressTaken, .created])
        #expect(try await users.find("m2", in: other) == nil)
        #expect(try await upserted([withEmail("m4", "both@example.com"), withEmail("m5", "Both@example.com")], in: other)
            == [.created, .addressTaken], "two records of one write")
        #expect(try await upserted([withEmail("m1", "Mail@Example.com")], in: other) == [.replaced([])], "its own address again")
        // (PostgreSQL's store throws the 409 inside its transaction's error; the admin API answers it 409.)
        await #expect(throws: (any Error).self, "an update that takes another's address") {
            try await users.update("m3", in: other, recording: event("m3 takes mail", other), journaling: []) { user in
                withEmail(user.userID, "mail@example.com")
            }
        }
        #expect(try await users.find("m3", in: other)?.profile[.email] == "m3@example.com")
        // Given up, the address is free for the next.
        #expect(try await upserted([withEmail("m1", nil)], in: other) == [.replaced([])])
        #expect(try await upserted([withEmail("m3", "mail@example.com")], in: other) == [.replaced([])])

        // Byte order ("ä" is 0xC3 0xA4, after every ASCII id), prefixes, cursors and limits.
        #expect(try await ids() == ["a", "ab", "b", "c", "ä"])
        #expect(try await ids(prefix: "a") == ["a", "ab"])
        #expect(try await ids(after: "ab", limit: 2) == ["b", "c"])
        #expect(try await ids(prefix: "a", after: "a") == ["ab"])
        #expect(try await ids(prefix: "ä") == ["ä"])

        // An update sees the stored user and journals its changes; no user, no change, no row and no entry.
        let disabling = origin.change(.disabled, of: "a", in: app)
        let updated = try await users.update("a", in: app, recording: event("updated", app), journaling: [disabling]) { user in
            PasswordUserRecord(userID: user.userID, hash: user.hash, profile: user.profile, disabled: true)
        }
        #expect(updated)
        made.append(disabling)
        #expect(try await users.find("a", in: app)?.disabled == true)
        #expect(try await users.find("a", in: app)?.profile[.firstName] == "Ada")
        #expect(
            try await !users.update(
                "nobody", in: app, recording: event("updated nobody", app),
                journaling: [origin.change(.disabled, of: "nobody", in: app)]
            ) { _ in record("nobody") })
        #expect(try await users.find("nobody", in: app) == nil)

        // Only an absent user is added.
        #expect(try await !users.insertIfAbsent(record("b", firstName: "Not Bob"), in: app, recording: event("kept b", app)))
        #expect(try await users.find("b", in: app)?.profile[.firstName] == nil)
        #expect(try await users.insertIfAbsent(record("d"), in: app, recording: event("added d", app)))

        // A login is noted; its upgraded hash lands only over the hash it was checked against.
        #expect(try await users.find("b", in: app)?.lastLoginAt == nil)
        try await users.recordLogin("b", in: app, replacing: oldHash, with: newHash)
        let signedIn = try #require(try await users.find("b", in: app))
        #expect(signedIn.hash == newHash)
        #expect(signedIn.lastLoginAt != nil)
        try await users.recordLogin("c", in: app, replacing: newHash, with: oldHash)
        #expect(try await users.find("c", in: app)?.hash == oldHash, "c's hash was never newHash")

        // Logins written behind them: a later time wins, an earlier one (another replica's) never moves it
        // back, and a user who is gone is skipped.
        let later = Date().addingTimeInterval(60)
        func isLater(_ userID: String) async throws -> Bool {
            // PostgreSQL keeps whole microseconds.
            let user = try await users.find(userID, in: app)
            guard let time = user?.lastLoginAt else { return false }
            return abs(time.timeIntervalSince(later)) < 0.000_002
        }
        try await users.recordLogins(["a": later, "nobody": later], in: app)
        #expect(try await isLater("a"))
        try await users.recordLogins(["a": later.addingTimeInterval(-30), "c": later], in: app)
        #expect(try await isLater("a"))
        #expect(try await isLater("c"))
        #expect(try await users.find("nobody", in: app) == nil)

        // Deleted once, journaled once.
        let deletion = origin.change(.deleted, of: "d", in: app)
        #expect(try await users.delete("d", in: app, recording: event("deleted d", app), journaling: [deletion]))
        made.append(deletion)
        #expect(
            try await !users.delete(
                "d", in: app, recording: event("deleted d again", app), journaling: [origin.change(.deleted, of: "d", in: app)]))

        // One import per app at a time; another app's import runs.
        let nested = try await users.whileImporting(into: app) {
            (try await users.whileImporting(into: app) { 1 }, try await users.whileImporting(into: other) { 2 })
        }
        #expect(nested?.0 == nil)
        #expect(nested?.1 == 2)
        #expect(try await users.whileImporting(into: app) { 3 } == 3, "the lock is free again")

        // The journal holds every change a write made, and only those: nothing applied them here.
        let journaled = try await gateway.pluginServices.userChanges.claimUnfinished(olderThan: .zero, limit: 100, lease: .seconds(60))
        #expect(Set(journaled.map(\.id)) == Set(made.map(\.id)) && journaled.count == made.count, "\(journaled) against \(made)")
        #expect(journaled.sorted { $0.id.uuidString < $1.id.uuidString } == made.sorted { $0.id.uuidString < $1.id.uuidString })

        let rows = try await gateway.auditRows().map(\.event)
        #expect(rows.count == 16 && rows.filter { $0.hasPrefix("upserted ") }.count == 13, "\(rows)")
        #expect(rows.suffix(3) == ["updated", "added d", "deleted d"], "\(rows)")
    }
}
