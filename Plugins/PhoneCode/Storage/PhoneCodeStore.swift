import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayPluginPostgres

/// The `phone_codes` and `phone_numbers` tables as the plugin uses them: in
/// PostgreSQL (``PostgresPhoneCodes``) or in memory (``MemoryPhoneCodes``).
protocol PhoneCodeStore: Sendable {
    /// Stores a new code for the number, replacing an older one, unless a
    /// live code went out less than `resendAfterSeconds` ago; of two
    /// concurrent requests for one number, at most one stores. Returns `nil`
    /// when stored, otherwise the seconds until a new code may be sent.
    func storeUnlessTooSoon(
        code mac: [UInt8], for number: PhoneNumber, in appID: AppID, attempts: Int, lifetimeSeconds: Int,
        resendAfterSeconds: Int
    ) async throws -> Int?

    /// Forgets the number's code (its delivery failed).
    func discardCode(for number: PhoneNumber, in appID: AppID) async throws

    /// Checks `mac` against the live code; concurrent checks of one code see
    /// each other: at most one is accepted, and every wrong one spends a try.
    func check(_ mac: [UInt8], for number: PhoneNumber, in appID: AppID) async throws -> PhoneCodeCheck

    func binding(of number: PhoneNumber, in appID: AppID) async throws -> PhoneNumberBinding?

    /// Bindings in number order after `after`.
    func bindings(in appID: AppID, after: String?, limit: Int) async throws -> [PhoneNumberBinding]

    /// Binds the number to a user, with the audit row `describe` makes of
    /// whether the binding is new; `true` when it is.
    func bind(
        _ number: PhoneNumber, to identity: VerifiedIdentity, in appID: AppID,
        recording describe: @escaping @Sendable (Bool) -> AuditEvent
    ) async throws -> Bool

    /// The numbers bound to `userID`, in number order.
    func bindings(of userID: String, in appID: AppID) async throws -> [PhoneNumberBinding]

    /// Unbinds the number (only from `userID`, when given), with `event`;
    /// `false` (and no row) when it was not bound (to them).
    func unbind(_ number: PhoneNumber, in appID: AppID, boundTo userID: String?, recording event: AuditEvent) async throws -> Bool
}

/// A user bound to a number, with the profile fields for the claims.
struct PhoneNumberBinding: Sendable {
    let phoneNumber: String
    let identity: VerifiedIdentity
    let createdAt: Date
    let updatedAt: Date
}

/// What checking a code against the stored one found.
enum PhoneCodeCheck: Sendable, Equatable {
    /// It matched; the code is gone now (single use).
    case accepted
    /// It did not match; `attemptsLeft` more tries before the code dies.
    case wrong(attemptsLeft: Int)
    /// No live code: never sent, expired, used or out of tries.
    case noCode
}

extension PluginServices {
    /// The codes and numbers where this gateway keeps its plugins' tables.
    var phoneCodes: any PhoneCodeStore {
        switch storage {
        case .database(let database): PostgresPhoneCodes(client: database.postgres, logger: logger)
        case .memory(let memory): MemoryPhoneCodes(table: memory.table(of: MemoryPhoneCodes.Rows.self, empty: .init()))
        }
    }
}
