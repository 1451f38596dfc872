public import GatewayCore
public import Logging

/// What the gateway lends a plugin: where its own tables are (its
/// migrations made them), the apps (to check the one a route names), and a
/// logger.
public struct PluginServices: Sendable {
    /// For the plugin's own tables only; the gateway's are behind ``apps``.
    public let storage: PluginStorage
    public let apps: any AppStore
    /// Users' sessions, for a plugin whose admin routes end a user's (a
    /// user disabled, deleted or given a new password).
    public let sessions: any SessionStore
    /// The user changes not every holder has heard yet: a plugin's
    /// directory journals the changes it makes with its write.
    public let userChanges: any UserChangeJournal
    public let logger: Logger
    /// How a token request's database step waits: each attempt within its
    /// timeout, and a read tried again while the database fails over, within
    /// its window (``DatabaseRetry``); then it is answered 503 `unavailable`.
    public let databaseRetry: DatabaseRetry

    /// How long one attempt at a request's database step may take.
    public var databaseTimeout: Duration { databaseRetry.attemptTimeout }

    public init(
        storage: PluginStorage, apps: any AppStore, sessions: any SessionStore, userChanges: any UserChangeJournal,
        logger: Logger, databaseRetry: DatabaseRetry = .once(within: .seconds(2))
    ) {
        self.storage = storage
        self.apps = apps
        self.sessions = sessions
        self.userChanges = userChanges
        self.logger = logger
        self.databaseRetry = databaseRetry
    }

    /// Writes an audit row of the plugin's own (an admin action that
    /// changes no table), where its tables are.
    public func record(_ event: AuditEvent) async throws {
        switch storage {
        case .database(let database): try await database.record(event, logger: logger)
        case .memory(let memory): try memory.record(event)
        }
    }
}
