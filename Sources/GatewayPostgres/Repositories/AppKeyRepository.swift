import Foundation
public import GatewayCore
public import Logging
public import PostgresNIO

/// The `app_keys` table: each tenant's signing keys.
public struct AppKeyRepository: Sendable {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func insert(_ key: StoredKey) async throws {
        try await client.query(
            """
            INSERT INTO app_keys (app_id, key_id, status, bits, public_key_pem, sealed_private_key, activated_at)
            VALUES (\(key.appID.uuid), \(key.keyID.uuid), \(key.status.rawValue), \(key.bits), \(key.publicKeyPEM),
                    \(ByteBuffer(bytes: key.sealedPrivateKey)),
                    CASE WHEN \(key.status.rawValue) = 'active' THEN now() END)
            """, logger: logger)
    }

    /// The key that signs for `appID`, if it has one.
    public func activeKey(of appID: AppID) async throws -> StoredKey? {
        try await keys(of: appID, status: .active).first
    }

    /// The app's keys, newest first, optionally of one status.
    public func keys(of appID: AppID, status: KeyStatus? = nil) async throws -> [StoredKey] {
        let rows = try await client.query(
            """
            SELECT key_id, status, bits, public_key_pem, sealed_private_key, created_at
            FROM app_keys
            WHERE app_id = \(appID.uuid) AND (\(status?.rawValue)::text IS NULL OR status = \(status?.rawValue))
            ORDER BY created_at DESC, key_id
            """, logger: logger)
        var keys: [StoredKey] = []
        for try await (keyID, status, bits, publicKeyPEM, sealed, createdAt)
            in rows.decode((UUID, String, Int, String, ByteBuffer, Date).self)
        {
            keys.append(
                StoredKey(
                    appID: appID, keyID: KeyID(uuid: keyID), status: KeyStatus(rawValue: status) ?? .retired,
                    bits: bits, publicKeyPEM: publicKeyPEM, sealedPrivateKey: Data(sealed.readableBytesView),
                    createdAt: createdAt))
        }
        return keys
    }
}
