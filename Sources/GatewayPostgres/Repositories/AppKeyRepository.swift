import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `app_keys` table: each tenant's signing keys. Writes take the
/// connection of the caller's transaction and announce the change.
public struct AppKeyRepository: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func insert(_ key: StoredKey) async throws {
        try await client.withConnection { try await insert(key, on: $0) }
    }

    public func insert(_ key: StoredKey, on connection: PostgresConnection) async throws {
        try await connection.tracedQuery(
            """
            INSERT INTO app_keys (app_id, key_id, status, bits, public_key_pem, sealed_private_key, activated_at)
            VALUES (\(key.appID.uuid), \(key.keyID.uuid), \(key.status.rawValue), \(key.bits), \(key.publicKeyPEM),
                    \(ByteBuffer(bytes: key.sealedPrivateKey)),
                    CASE WHEN \(key.status.rawValue) = 'active' THEN now() END)
            """, logger: logger)
        try await notify(key.appID, on: connection)
    }

    /// Locks the app's key set until the caller's transaction ends (its
    /// `apps` row, `FOR UPDATE`) and counts it, so that two keys added at
    /// once cannot both pass a limit or both become active. `nil` when the
    /// app does not exist. The count is a statement after the lock: under
    /// READ COMMITTED it sees every key the previous holder committed.
    public func lockKeySet(of appID: AppID, on connection: PostgresConnection) async throws
        -> (count: Int, hasActive: Bool)?
    {
        let locked = try await connection.tracedQuery(
            "SELECT 1 FROM apps WHERE app_id = \(appID.uuid) FOR UPDATE", logger: logger)
        var exists = false
        for _ in try locked.decode(Int.self) { exists = true }
        guard exists else { return nil }
        let counted = try await connection.tracedQuery(
            """
            SELECT count(*)::int8, count(*) FILTER (WHERE status = 'active')::int8
            FROM app_keys WHERE app_id = \(appID.uuid)
            """, logger: logger)
        for (count, active) in try counted.decode((Int, Int).self) {
            return (count, active > 0)
        }
        return (0, false)
    }

    /// Makes `keyID` the app's signing key and retires the one it replaces, in
    /// the caller's transaction. `false` when the app has no such key.
    public func activate(_ keyID: KeyID, of appID: AppID, on connection: PostgresConnection) async throws -> Bool {
        let target = try await connection.tracedQuery(
            "SELECT status FROM app_keys WHERE app_id = \(appID.uuid) AND key_id = \(keyID.uuid) FOR UPDATE",
            logger: logger)
        var exists = false
        for _ in try target.decode(String.self) { exists = true }
        guard exists else { return false }
        try await connection.tracedQuery(
            """
            UPDATE app_keys SET status = 'retired', retired_at = now()
            WHERE app_id = \(appID.uuid) AND status = 'active' AND key_id <> \(keyID.uuid)
            """, logger: logger)
        try await connection.tracedQuery(
            """
            UPDATE app_keys SET status = 'active', activated_at = now(), retired_at = NULL
            WHERE app_id = \(appID.uuid) AND key_id = \(keyID.uuid)
            """, logger: logger)
        try await notify(appID, on: connection)
        return true
    }

    /// Deletes a key that does not sign; the active key is refused.
    public func delete(_ keyID: KeyID, of appID: AppID, on connection: PostgresConnection) async throws -> KeyDeletion {
        let rows = try await connection.tracedQuery(
            """
            DELETE FROM app_keys
            WHERE app_id = \(appID.uuid) AND key_id = \(keyID.uuid) AND status <> 'active'
            RETURNING key_id
            """, logger: logger)
        for _ in rows {
            try await notify(appID, on: connection)
            return .deleted
        }
        return try await key(keyID, of: appID) == nil ? .notFound : .refusedActive
    }

    /// The key that signs for `appID`, if it has one.
    public func activeKey(of appID: AppID) async throws -> StoredKey? {
        try await select(of: appID, status: .active).first
    }

    public func key(_ keyID: KeyID, of appID: AppID) async throws -> StoredKey? {
        try await keys(of: appID).first { $0.keyID == keyID }
    }

    /// The app's keys, newest first.
    public func keys(of appID: AppID) async throws -> [StoredKey] {
        try await select(of: appID, status: nil)
    }

    /// The app's keys, newest first, optionally of one status.
    private func select(of appID: AppID, status: KeyStatus?) async throws -> [StoredKey] {
        let rows = try await client.tracedQuery(
            """
            SELECT key_id, status, bits, public_key_pem, sealed_private_key, created_at, activated_at, retired_at
            FROM app_keys
            WHERE app_id = \(appID.uuid) AND (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue))
            ORDER BY created_at DESC, key_id
            """, logger: logger)
        var keys: [StoredKey] = []
        for (keyID, status, bits, publicKeyPEM, sealed, createdAt, activatedAt, retiredAt)
            in try rows.decode((UUID, String, Int, String, ByteBuffer, Date, Date?, Date?).self)
        {
            guard let status = KeyStatus(rawValue: status) else {
                throw UnreadableRow("key \(keyID) has an unknown status '\(status)'")
            }
            var key = StoredKey(
                appID: appID, keyID: KeyID(uuid: keyID), status: status, bits: bits, publicKeyPEM: publicKeyPEM,
                sealedPrivateKey: Data(sealed.readableBytesView), createdAt: createdAt)
            key.activatedAt = activatedAt
            key.retiredAt = retiredAt
            keys.append(key)
        }
        return keys
    }

    /// Every app's sealed private key, locked until the caller's transaction ends.
    func lockSealedKeys(on connection: PostgresConnection) async throws -> [(appID: AppID, keyID: KeyID, sealed: Data)] {
        let rows = try await connection.tracedQuery(
            "SELECT app_id, key_id, sealed_private_key FROM app_keys ORDER BY app_id, key_id FOR UPDATE", logger: logger)
        var keys: [(appID: AppID, keyID: KeyID, sealed: Data)] = []
        for (appID, keyID, sealed) in try rows.decode((UUID, UUID, ByteBuffer).self) {
            keys.append((AppID(uuid: appID), KeyID(uuid: keyID), Data(sealed.readableBytesView)))
        }
        return keys
    }

    /// Replaces a key's sealed private key (after re-sealing it under a new master key).
    func replaceSealedKey(
        _ sealed: Data, of keyID: KeyID, of appID: AppID, on connection: PostgresConnection
    ) async throws {
        try await connection.tracedQuery(
            """
            UPDATE app_keys SET sealed_private_key = \(ByteBuffer(bytes: sealed))
            WHERE app_id = \(appID.uuid) AND key_id = \(keyID.uuid)
            """, logger: logger)
    }

    /// The public key `keyID` of any app whose provider id is `issuer`: what
    /// a token claiming that issuer and key must verify under.
    public func publicKeyPEM(issuer: ProviderID, keyID: KeyID) async throws -> (appID: AppID, pem: String)? {
        let rows = try await client.tracedQuery(
            """
            SELECT k.app_id, k.public_key_pem FROM app_keys k JOIN apps a ON a.app_id = k.app_id
            WHERE k.key_id = \(keyID.uuid) AND a.provider_id = \(issuer.uuid)
            """, logger: logger)
        for (appID, pem) in try rows.decode((UUID, String).self) { return (AppID(uuid: appID), pem) }
        return nil
    }

    private func notify(_ appID: AppID, on connection: PostgresConnection) async throws {
        try await connection.tracedQuery(
            "SELECT pg_notify(\(AppChangeNotification.channel), \(appID.description))", logger: logger)
    }
}
