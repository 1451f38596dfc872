#if canImport(Security)
public import Foundation
import Security

/// A store in the keychain, as one generic password item per app
/// (service `service`, account the app id). With an `accessGroup` shared
/// by an app and its extensions (a widget, a notification service), they
/// hold one session: each reads it before its refresh and stores the
/// successor, and a refused token is removed only while it is still the
/// one stored (the keychain has no compare-and-swap: the check and the
/// write are two calls, which leaves a window of microseconds between
/// processes that ``FileSessionStore``'s lock closes). Readable after the device's first unlock, so a background
/// refresh works; never synchronised to other devices (a refresh token
/// spent on one device would be reuse on the other).
public actor KeychainSessionStore: SessionStore {
    /// The item's service (`kSecAttrService`).
    public let service: String
    /// The app whose session the item holds (its account, `kSecAttrAccount`).
    public let appID: String
    /// The keychain access group an app and its extensions share, if any.
    public let accessGroup: String?
    private let refreshLock: ProcessLock?

    /// - Parameter refreshLockFile: where processes sharing the item take
    ///   turns to refresh: a file in the app group's container
    ///   (`FileManager.containerURL(forSecurityApplicationGroupIdentifier:)`).
    ///   Without it, an app and its extension refreshing at the same moment
    ///   may, rarely, end the session as reuse.
    public init(
        service: String = "identity-gateway.session", appID: String, accessGroup: String? = nil, refreshLockFile: URL? = nil
    ) {
        self.service = service
        self.appID = appID
        self.accessGroup = accessGroup
        self.refreshLock = refreshLockFile.map(ProcessLock.init(url:))
    }

    public func exclusively<T: Sendable>(_ refresh: @Sendable () async throws -> T) async throws -> T {
        guard let refreshLock else { return try await refresh() }
        return try await refreshLock.holding(refresh)
    }

    private var query: [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: appID,
            kSecAttrSynchronizable as String: kCFBooleanFalse as Any,
            kSecUseDataProtectionKeychain as String: true,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    public func load() throws -> StoredSession? {
        var search = query
        search[kSecReturnData as String] = true
        search[kSecMatchLimit as String] = kSecMatchLimitOne
        var found: CFTypeRef?
        let status = SecItemCopyMatching(search as CFDictionary, &found)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = found as? Data else { throw KeychainFailure(status: status) }
        return try JSONDecoder.sessions.decode(StoredSession.self, from: data)
    }

    public func save(_ session: StoredSession, replacing expected: String?) throws -> Bool {
        if let expected, try load()?.refreshToken != expected { return false }
        let data = try JSONEncoder.sessions.encode(session)
        let update: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if status == errSecItemNotFound {
            var item = query
            item.merge(update) { _, new in new }
            status = SecItemAdd(item as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw KeychainFailure(status: status) }
        return true
    }

    public func remove(ifHolding refreshToken: String?) throws {
        if let refreshToken, try load()?.refreshToken != refreshToken { return }
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainFailure(status: status) }
    }

    /// A keychain call that failed, with its `OSStatus`.
    public struct KeychainFailure: Error, CustomStringConvertible {
        /// The keychain's status code.
        public let status: OSStatus
        /// The status and the keychain's message for it.
        public var description: String {
            let message = SecCopyErrorMessageString(status, nil) as String? ?? "unknown"
            return "keychain error \(status): \(message)"
        }
    }
}
#endif
