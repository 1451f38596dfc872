import Foundation
import GatewayCore
import GatewayPluginKit

/// The passkey tables in memory, for tests of the plugin's logic; the SQL
/// (``PostgresPasskeys``) is tested against PostgreSQL.
struct MemoryPasskeys: PasskeyStore {
    struct Challenge: Sendable {
        let ceremony: PasskeyCeremony
        let userID: String?
        let expiresAt: Date
    }

    struct Rows: Sendable {
        var challenges: [AppID: [[UInt8]: Challenge]] = [:]
        var passkeys: [AppID: [[UInt8]: StoredPasskey]] = [:]
    }

    let table: MemoryTable<Rows>

    func keepChallenge(
        _ digest: [UInt8], for ceremony: PasskeyCeremony, userID: String?, in appID: AppID, lifetimeSeconds: Int
    ) async throws {
        let now = Date()
        table.change { rows in
            rows.challenges[appID] = rows.challenges[appID, default: [:]].filter { $0.value.expiresAt > now }
            rows.challenges[appID, default: [:]][digest] = Challenge(
                ceremony: ceremony, userID: userID, expiresAt: now.addingTimeInterval(Double(lifetimeSeconds)))
        }
    }

    func spendChallenge(_ digest: [UInt8], for ceremony: PasskeyCeremony, in appID: AppID) async throws -> (
        spent: Bool, userID: String?
    ) {
        table.change { rows in
            guard let challenge = rows.challenges[appID]?[digest], challenge.ceremony == ceremony else { return (false, nil) }
            rows.challenges[appID]?[digest] = nil
            return challenge.expiresAt > Date() ? (true, challenge.userID) : (false, nil)
        }
    }

    func passkey(_ credentialID: [UInt8], in appID: AppID) async throws -> StoredPasskey? {
        table.change { $0.passkeys[appID]?[credentialID] }
    }

    func passkeys(of userID: String, in appID: AppID) async throws -> [StoredPasskey] {
        table.change { rows in
            (rows.passkeys[appID] ?? [:]).values.filter { $0.userID == userID }.sorted { $0.createdAt < $1.createdAt }
        }
    }

    func add(_ passkey: StoredPasskey, in appID: AppID, recording event: AuditEvent) async throws -> PasskeyAddition {
        try table.change({ rows in
            let existing = rows.passkeys[appID] ?? [:]
            if existing[passkey.credentialID] != nil { return PasskeyAddition.duplicate }
            if existing.values.count(where: { $0.userID == passkey.userID }) >= PasskeyStoreLimits.maximumPerUser { return .tooMany }
            rows.passkeys[appID, default: [:]][passkey.credentialID] = passkey
            return .added
        }, recording: { $0 == .added ? event : nil })
    }

    func recordUse(
        of credentialID: [UInt8], in appID: AppID, previous: UInt32, asserted: AssertedCredential
    ) async throws -> Bool {
        table.change { rows in
            guard var passkey = rows.passkeys[appID]?[credentialID], passkey.signCount == previous else { return false }
            passkey.signCount = asserted.signCount
            passkey.backupEligible = asserted.backupEligible
            passkey.backedUp = asserted.backedUp
            passkey.lastUsedAt = Date()
            rows.passkeys[appID]?[credentialID] = passkey
            return true
        }
    }

    func rename(_ credentialID: [UInt8], of userID: String, in appID: AppID, to name: String, recording event: AuditEvent)
        async throws -> Bool
    {
        try table.change({ rows in
            guard var passkey = rows.passkeys[appID]?[credentialID], passkey.userID == userID else { return false }
            passkey.name = name
            rows.passkeys[appID]?[credentialID] = passkey
            return true
        }, recording: { $0 ? event : nil })
    }

    func revoke(_ credentialID: [UInt8], of userID: String, in appID: AppID, recording event: AuditEvent) async throws -> Bool {
        try table.change({ rows in
            guard rows.passkeys[appID]?[credentialID]?.userID == userID else { return false }
            rows.passkeys[appID]?[credentialID] = nil
            return true
        }, recording: { $0 ? event : nil })
    }
}
