import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayPluginPostgres
import Logging

/// The `password_users` table as the plugin uses it: in PostgreSQL
/// (``PostgresPasswordUsers``) or in memory (``MemoryPasswordUsers``). Each
/// write commits with its audit row, or neither lands.
protocol PasswordUserStore: Sendable {
    /// The user, or `nil` when the app has no such user. Every login asks.
    func find(_ userID: String, in appID: AppID) async throws -> PasswordUser?

    /// Up to two users whose email is `email`, compared case-insensitively
    /// (two say the address is shared). An email-code request asks.
    func find(email: String, in appID: AppID) async throws -> [PasswordUser]

    /// Users in user-id (byte) order after `after`, whose id starts with `prefix`.
    func list(in appID: AppID, prefix: String, emailVerified: Bool?, after: String?, limit: Int) async throws -> [PasswordUser]

    /// Notes a successful login and, when given, stores the upgraded hash,
    /// unless the hash changed meanwhile (an admin set a new password).
    func recordLogin(_ userID: String, in appID: AppID, replacing old: PasswordHash, with new: PasswordHash?) async throws

    /// Sets each user's `last_login_at` to their time, unless it is later
    /// already (another replica wrote a later login); users no longer there are skipped.
    func recordLogins(_ times: [String: Date], in appID: AppID) async throws

    /// Runs `body` holding the app's import lock, which every replica sees;
    /// `nil`, without running `body`, when another import of the app holds it.
    func whileImporting<Result: Sendable>(into appID: AppID, _ body: () async throws -> Result) async throws -> Result?

    /// Creates or replaces users, with the audit row `describe` makes of
    /// what happened to each (none where it makes none), and journals the
    /// user changes a replacement makes (made by `origin`); for each record,
    /// what happened to its user. A record that would give its user an
    /// address another user of the app has is not written
    /// (``PasswordUpsert/addressTaken``): an address belongs to one user.
    func upsert(
        _ records: [PasswordUserRecord], in appID: AppID, by origin: UserChangeOrigin,
        recording describe: @escaping @Sendable ([PasswordUpsert]) -> AuditEvent?
    ) async throws -> [PasswordUpsert]

    /// Replaces the user with what `change` makes of them, with `event` and
    /// `userChanges` journaled, the user locked meanwhile; `false` (and no
    /// row) when there is none. Throws 409 `email_taken` (and changes
    /// nothing) where the change gives them an address another user has.
    func update(
        _ userID: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange],
        _ change: @escaping @Sendable (PasswordUser) -> PasswordUserRecord
    ) async throws -> Bool

    /// Adds the user, with `event`, unless the app has one with that id; whether it was added.
    func insertIfAbsent(_ record: PasswordUserRecord, in appID: AppID, recording event: AuditEvent) async throws -> Bool

    /// Deletes the user, with `event` and `userChanges` journaled; `false` (and no row) when there was none.
    func delete(_ userID: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange])
        async throws -> Bool

    /// Adds `record` as a self-service account for its address unless a
    /// user has that address (any case) or that id: then nothing is changed
    /// and that user is answered. The row `describe` makes of the outcome
    /// commits with it either way. Sign-ups of one address wait for each
    /// other on every replica, so an address gets one account however many
    /// ask at once.
    func signUp(
        _ record: PasswordUserRecord, email: String, in appID: AppID,
        recording describe: @escaping @Sendable (AccountSignUp) -> AuditEvent
    ) async throws -> AccountSignUp

    /// Marks `email` verified for the user, with `event`, while it is still their address; whether it was.
    func verifyEmail(_ email: String, of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool

    /// Makes `email` (verified) the user's address, with `event` and
    /// `userChanges` journaled, unless another user has it; waits for
    /// sign-ups of that address as they wait for each other.
    func changeEmail(
        of userID: String, to email: String, in appID: AppID, recording event: AuditEvent, journaling userChanges: [UserChange]
    ) async throws -> AccountEmailChange
}

/// What storing one record did to its user.
enum PasswordUpsert: Sendable, Equatable {
    case created
    /// Replaced; `changes` (journaled with the write) says what the user's
    /// other holders must hear: ``UserChange/Kind/disabled`` when they were
    /// enabled before, ``UserChange/Kind/passwordChanged`` when the hash is
    /// another (both, in that order, when both), none when neither (a sync
    /// that sends the same user again).
    case replaced(changes: [UserChange])
    /// Not written: the record gives its user an address another user of
    /// the app has (compared case-insensitively), or an earlier record of
    /// the same write does. A user who shares an address from before keeps
    /// it while it is sent unchanged (and signs in by it with neither).
    case addressTaken

    var isCreated: Bool { self == .created }

    /// The 409 of a write that would give a user another user's address.
    static let addressTakenError = GatewayError(.emailTaken, .conflict, "Another user of this app has this email address.")

    /// The change a replacement of `old` by `record` makes.
    static func replacing(
        disabled wasDisabled: Bool, hash oldHash: String, by record: PasswordUserRecord, in appID: AppID, origin: UserChangeOrigin
    ) -> PasswordUpsert {
        var kinds: [UserChange.Kind] = []
        if record.disabled, !wasDisabled { kinds.append(.disabled) }
        if record.hash.text != oldHash { kinds.append(.passwordChanged) }
        return .replaced(changes: kinds.map { origin.change($0, of: record.userID, in: appID) })
    }

    /// What a replacement journals.
    var userChanges: [UserChange] {
        guard case .replaced(let changes) = self else { return [] }
        return changes
    }
}

extension PluginServices {
    /// The password users where this gateway keeps its plugins' tables.
    var passwordUsers: any PasswordUserStore {
        switch storage {
        case .database(let database): PostgresPasswordUsers(client: database.postgres, logger: logger)
        case .memory(let memory):
            MemoryPasswordUsers(table: memory.table(of: MemoryPasswordUsers.Rows.self, empty: .init()), journal: userChanges)
        }
    }
}

/// Which records of a write may take their address: none whose address
/// (lower-cased) is new to its user and belongs to another user, or is
/// claimed by an earlier record of the write. Both stores decide by it.
enum AddressClaims {
    /// The user ids of `records` whose address is taken. `stored` is each
    /// written user's address as stored (lower-cased), `holders` who holds
    /// each claimed address now.
    static func taken(
        _ records: [PasswordUserRecord], stored: [String: String], holders: [String: Set<String>]
    ) -> Set<String> {
        var claimedBy: [String: String] = [:]
        var taken: Set<String> = []
        for record in records {
            guard let address = record.profile[.email]?.lowercased(), stored[record.userID] != address else { continue }
            if let claimer = claimedBy[address], claimer != record.userID {
                taken.insert(record.userID)
                continue
            }
            claimedBy[address] = record.userID
            if !(holders[address] ?? []).subtracting([record.userID]).isEmpty { taken.insert(record.userID) }
        }
        return taken
    }

    /// The addresses `records` would give their users anew, lower-cased and sorted (the order their locks are taken in).
    static func new(in records: [PasswordUserRecord], stored: [String: String]) -> [String] {
        Set(records.compactMap { record in
            record.profile[.email].map { $0.lowercased() }.flatMap { stored[record.userID] == $0 ? nil : $0 }
        }).sorted()
    }
}
