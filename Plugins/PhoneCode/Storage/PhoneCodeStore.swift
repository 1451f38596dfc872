import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import GatewayPluginPostgres

/// The `phone_codes` and `phone_numbers` tables as the plugin uses them: in
/// PostgreSQL (``PostgresPhoneCodes``) or in memory (``MemoryPhoneCodes``).
/// The codes are the courier's (``CodeStore``, on the `phone_codes` table); the
/// directory of numbers bound to users is the plugin's own.
protocol PhoneCodeStore: CodeStore where Address == PhoneNumber {
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

extension PluginServices {
    /// The codes and numbers where this gateway keeps its plugins' tables.
    var phoneCodes: any PhoneCodeStore {
        switch storage {
        case .database(let database): PostgresPhoneCodes(client: database.postgres, logger: logger)
        case .memory(let memory): MemoryPhoneCodes(memory: memory)
        }
    }
}
