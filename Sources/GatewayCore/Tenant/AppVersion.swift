public import Foundation

/// What a replica loaded an app from, in enough detail to tell, cheaply and
/// for every app at once, whether it changed since: the app row's
/// `updated_at` (every change to its settings sets it) and its keys' count
/// and latest change (made, activated, retired). The periodic check of the
/// tenant cache compares these instead of dropping every app.
public struct AppVersion: Sendable, Equatable {
    public var updatedAt: Date
    public var keyCount: Int
    public var latestKeyChange: Date?

    public init(updatedAt: Date, keyCount: Int, latestKeyChange: Date?) {
        self.updatedAt = updatedAt
        self.keyCount = keyCount
        self.latestKeyChange = latestKeyChange
    }

    /// The version of `app` with `keys`, as the stores compute it in one query.
    public init(app: StoredApp, keys: [StoredKey]) {
        self.init(
            updatedAt: app.updatedAt, keyCount: keys.count,
            latestKeyChange: keys.map { max($0.createdAt, $0.activatedAt ?? $0.createdAt, $0.retiredAt ?? $0.createdAt) }.max())
    }
}
