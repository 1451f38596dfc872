/// The apps' signing keys, as the admin API and the validator read and
/// change them. Every change commits together with its audit row, or
/// neither does.
public protocol KeyStore: Sendable {
    func key(_ keyID: KeyID, of appID: AppID) async throws -> StoredKey?
    /// The app's keys, newest first.
    func keys(of appID: AppID) async throws -> [StoredKey]
    /// The public key of the app whose provider id is `issuer`, for the token validator.
    func publicKeyPEM(issuer: ProviderID, keyID: KeyID) async throws -> (appID: AppID, pem: String)?
    /// Adds the key `seal` makes, with the state it gets: `active` when the
    /// app has no active key, `next` otherwise. Decided under a lock on the
    /// app's key set, so two keys added at once cannot both become active or
    /// both pass ``StoredKey/maximumPerApp``. The audit row is `describe`'s.
    func add(
        to appID: AppID, _ seal: @Sendable (KeyStatus) throws -> StoredKey,
        recording describe: @Sendable (StoredKey) -> AuditEvent
    ) async throws -> KeyAddition
    /// Makes the key the signing key (the one it replaces retires) and
    /// records `event`; `false` when the app has no such key.
    func activate(_ keyID: KeyID, of appID: AppID, recording event: AuditEvent) async throws -> Bool
    /// Deletes a key that does not sign, recording `event` when it did.
    func delete(_ keyID: KeyID, of appID: AppID, recording event: AuditEvent) async throws -> KeyDeletion
}

/// What ``KeyStore/add(to:_:recording:)`` did.
public enum KeyAddition: Sendable {
    case added(StoredKey)
    case appNotFound
    /// The app holds ``StoredKey/maximumPerApp`` keys already.
    case full
}

/// What ``KeyStore/delete(_:of:recording:)`` did.
public enum KeyDeletion: Sendable {
    case deleted
    case notFound
    /// The key signs: another must be activated first.
    case refusedActive
}
