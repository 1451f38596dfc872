import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayPluginPostgres

/// Which ceremony a challenge was given for.
enum PasskeyCeremony: String, Sendable {
    case registration
    case assertion
}

/// A user's passkey as stored.
struct StoredPasskey: Sendable, Equatable {
    let credentialID: [UInt8]
    let userID: String
    var name: String
    let publicKey: [UInt8]
    let algorithm: Int
    var signCount: UInt32
    var backupEligible: Bool
    var backedUp: Bool
    let aaguid: UUID
    let attestationFormat: String
    let createdAt: Date
    var lastUsedAt: Date?
    /// The session that added it when that session's sign-in was one
    /// factor: the passkey is bound at that level (it never counts as two
    /// factors, and goes when the user's sessions all end). nil for one a
    /// multi-factor session or the admin API added.
    var oneFactorSessionID: UUID? = nil

    /// Whether a sign-in with it may count as two factors.
    var isBoundAtOneFactor: Bool { oneFactorSessionID != nil }

    var record: CredentialRecord { CredentialRecord(publicKey: publicKey, signCount: signCount) }
}

/// What adding a passkey came to.
enum PasskeyAddition: Sendable, Equatable {
    case added
    /// The credential id is registered already, in this app.
    case duplicate
    /// The user has ``PasskeyStoreLimits/maximumPerUser`` passkeys already.
    case tooMany
}

/// The passkey plugin's tables: challenges, spent once on every replica,
/// and users' passkeys; in PostgreSQL (``PostgresPasskeys``) or in memory
/// (``MemoryPasskeys``).
protocol PasskeyStore: Sendable {
    /// Keeps a challenge (its SHA-256) for `lifetimeSeconds`; the same
    /// statement drops some of the app's expired ones.
    func keepChallenge(
        _ digest: [UInt8], for ceremony: PasskeyCeremony, userID: String?, in appID: AppID, lifetimeSeconds: Int
    ) async throws

    /// Spends the challenge if it is live and was given for `ceremony` in
    /// the app: one statement, so it is spent once across replicas. Returns
    /// whether it was, and the user a registration's was for.
    func spendChallenge(_ digest: [UInt8], for ceremony: PasskeyCeremony, in appID: AppID) async throws -> (
        spent: Bool, userID: String?
    )

    func passkey(_ credentialID: [UInt8], in appID: AppID) async throws -> StoredPasskey?
    func passkeys(of userID: String, in appID: AppID) async throws -> [StoredPasskey]

    /// Adds `passkey` and its row, unless its id is taken or its user has too many.
    func add(_ passkey: StoredPasskey, in appID: AppID, recording event: AuditEvent) async throws -> PasskeyAddition

    /// Stores an assertion's counter and flags if the counter is still
    /// `previous` (no other assertion of the passkey came between).
    func recordUse(
        of credentialID: [UInt8], in appID: AppID, previous: UInt32, asserted: AssertedCredential
    ) async throws -> Bool

    /// Renames the user's passkey, with its row; `false` when there is none.
    func rename(_ credentialID: [UInt8], of userID: String, in appID: AppID, to name: String, recording event: AuditEvent)
        async throws -> Bool

    /// Deletes the user's passkey, with its row; `false` when there is none.
    func revoke(_ credentialID: [UInt8], of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool
}

extension PluginServices {
    /// The passkey tables where this gateway keeps its plugins' tables.
    var passkeys: any PasskeyStore {
        switch storage {
        case .database(let database): PostgresPasskeys(client: database.postgres, logger: logger, retry: databaseRetry)
        case .memory(let memory): MemoryPasskeys(table: memory.table(of: MemoryPasskeys.Rows.self, empty: .init()))
        }
    }
}
