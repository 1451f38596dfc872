import Foundation
import GatewayCore
import GatewayPluginKit

/// The password users in memory, for tests of the plugin's logic; its SQL
/// (``PostgresPasswordUsers``) is tested against PostgreSQL.
struct MemoryPasswordUsers: PasswordUserStore {
    struct Rows: Sendable {
        var users: [AppID: [String: PasswordUser]] = [:]
        var importing: Set<AppID> = []
    }

    let table: MemoryTable<Rows>
    /// Where the user changes a write makes are journaled, right after it.
    let journal: any UserChangeJournal

    func find(_ userID: String, in appID: AppID) async throws -> PasswordUser? {
        table.change { $0.users[appID]?[userID] }
    }

    func find(email: String, in appID: AppID) async throws -> [PasswordUser] {
        let key = email.lowercased()
        return table.change { rows in
            Array((rows.users[appID] ?? [:]).values.filter { $0.profile[.email]?.lowercased() == key }.prefix(2))
        }
    }

    /// Each id's bytes are taken once: the tests list ten thousand users, and
    /// a sort that made them per comparison held a thread for seconds.
    func list(in appID: AppID, prefix: String, emailVerified: Bool?, after: String?, limit: Int) async throws -> [PasswordUser] {
        let after = Array((after ?? "").utf8)
        let prefix = Array(prefix.utf8)
        let users = table.change { $0.users[appID].map { Array($0.values) } ?? [] }
        return users.map { (key: Array($0.userID.utf8), user: $0) }
            .filter { $0.key.starts(with: prefix) && after.lexicographicallyPrecedes($0.key) }
            .filter { emailVerified == nil || $0.user.profile.emailVerified == emailVerified }
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .prefix(limit).map(\.user)
    }

    func recordLogin(_ userID: String, in appID: AppID, replacing old: PasswordHash, with new: PasswordHash?) async throws {
        table.change { rows in
            guard var user = rows.users[appID]?[userID] else { return }
            user.lastLoginAt = Date()
            if let new, user.hash == old { user.hash = new }
            rows.users[appID]?[userID] = user
        }
    }

    func recordLogins(_ times: [String: Date], in appID: AppID) async throws {
        table.change { rows in
            for (userID, time) in times {
                guard var user = rows.users[appID]?[userID] else { continue }
                user.lastLoginAt = max(user.lastLoginAt ?? time, time)
                rows.users[appID]?[userID] = user
            }
        }
    }

    func whileImporting<Result: Sendable>(into appID: AppID, _ body: () async throws -> Result) async throws -> Result? {
        guard table.change({ $0.importing.insert(appID).inserted }) else { return nil }
        defer { table.change { _ = $0.importing.remove(appID) } }
        return try await body()
    }

    func upsert(
        _ records: [PasswordUserRecord], in appID: AppID, by origin: UserChangeOrigin,
        recording describe: @escaping @Sendable ([PasswordUpsert]) -> AuditEvent?
    ) async throws -> [PasswordUpsert] {
        let outcomes = try table.change({ rows in
            let taken = Self.taken(records, in: appID, rows)
            return records.map { record in
                if taken.contains(record.userID) { return PasswordUpsert.addressTaken }
                let old = rows.users[appID]?[record.userID]
                Self.put(record, in: appID, into: &rows)
                return old.map {
                    PasswordUpsert.replacing(disabled: $0.disabled, hash: $0.hash.text, by: record, in: appID, origin: origin)
                } ?? .created
            }
        }, recording: describe)
        try await journal.record(outcomes.flatMap(\.userChanges))
        return outcomes
    }

    func update(
        _ userID: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange],
        _ change: @escaping @Sendable (PasswordUser) -> PasswordUserRecord
    ) async throws -> Bool {
        let found = try table.change({ rows in
            guard let user = rows.users[appID]?[userID] else { return false }
            let changed = change(user)
            guard Self.taken([changed], in: appID, rows).isEmpty else { throw PasswordUpsert.addressTakenError }
            Self.put(changed, in: appID, into: &rows)
            return true
        }, recording: { $0 ? event : nil })
        if found { try await journal.record(userChanges) }
        return found
    }

    func insertIfAbsent(_ record: PasswordUserRecord, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try table.change({ rows in
            guard rows.users[appID]?[record.userID] == nil else { return false }
            return Self.put(record, in: appID, into: &rows)
        }, recording: { $0 ? event : nil })
    }

    func delete(_ userID: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange])
        async throws -> Bool
    {
        let deleted = try table.change(
            { rows in rows.users[appID]?.removeValue(forKey: userID) != nil }, recording: { $0 ? event : nil })
        if deleted { try await journal.record(userChanges) }
        return deleted
    }

    func signUp(
        _ record: PasswordUserRecord, email: String, in appID: AppID,
        recording describe: @escaping @Sendable (AccountSignUp) -> AuditEvent
    ) async throws -> AccountSignUp {
        try table.change({ rows in
            let key = email.lowercased()
            if let found = (rows.users[appID] ?? [:]).values.first(where: { $0.profile[.email]?.lowercased() == key })
                ?? rows.users[appID]?[record.userID]
            {
                return .exists(found.account)
            }
            Self.put(record, in: appID, into: &rows)
            return .created
        }, recording: describe)
    }

    func verifyEmail(_ email: String, of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try table.change({ rows in
            guard var user = rows.users[appID]?[userID], user.profile[.email]?.lowercased() == email.lowercased() else { return false }
            user.profile.emailVerified = true
            rows.users[appID]?[userID] = user
            return true
        }, recording: { $0 ? event : nil })
    }

    func changeEmail(
        of userID: String, to email: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange]
    ) async throws -> AccountEmailChange {
        let outcome: AccountEmailChange = try table.change({ rows in
            guard var user = rows.users[appID]?[userID] else { return .noUser }
            let key = email.lowercased()
            if (rows.users[appID] ?? [:]).values.contains(where: { $0.userID != userID && $0.profile[.email]?.lowercased() == key }) {
                return .taken
            }
            user.profile[.email] = email
            user.profile.emailVerified = true
            user.updatedAt = Date()
            rows.users[appID]?[userID] = user
            return .changed
        }, recording: { (outcome: AccountEmailChange) in outcome == .changed ? event : nil })
        if outcome == .changed { try await journal.record(userChanges) }
        return outcome
    }

    /// The ids of `records` whose address is taken (``AddressClaims``).
    private static func taken(_ records: [PasswordUserRecord], in appID: AppID, _ rows: Rows) -> Set<String> {
        let users = rows.users[appID] ?? [:]
        let stored = users.compactMapValues { $0.profile[.email]?.lowercased() }
        let claimed = Set(AddressClaims.new(in: records, stored: stored))
        var holders: [String: Set<String>] = [:]
        for user in users.values {
            if let address = user.profile[.email]?.lowercased(), claimed.contains(address) {
                holders[address, default: []].insert(user.userID)
            }
        }
        return AddressClaims.taken(records, stored: stored, holders: holders)
    }

    /// Stores the record, keeping a replaced user's creation and last login,
    /// and their address's verification while the address stays; whether it was created.
    @discardableResult
    private static func put(_ record: PasswordUserRecord, in appID: AppID, into rows: inout Rows) -> Bool {
        let now = Date()
        let old = rows.users[appID]?[record.userID]
        var profile = record.profile
        if profile.emailVerified == nil, let old, old.profile[.email]?.lowercased() == profile[.email]?.lowercased() {
            profile.emailVerified = old.profile.emailVerified
        }
        if profile[.email] == nil { profile.emailVerified = nil }
        rows.users[appID, default: [:]][record.userID] = PasswordUser(
            userID: record.userID, hash: record.hash, profile: profile, disabled: record.disabled,
            createdAt: old?.createdAt ?? now, updatedAt: now, lastLoginAt: old?.lastLoginAt)
        return old == nil
    }
}
