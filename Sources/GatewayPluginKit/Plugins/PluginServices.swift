public import GatewayCore
public import GatewayPostgres
public import Logging
public import PostgresNIO

/// What the gateway lends a plugin: a database for its own tables (its
/// migrations made them), the apps (to check the one a route names), and a
/// logger.
public struct PluginServices: Sendable {
    /// For the plugin's own tables only; the gateway's are behind ``apps``.
    public let client: PostgresClient
    public let apps: any AppStore
    public let logger: Logger
    /// How long a token request's database step may take before it is
    /// answered 503 `unavailable`.
    public let databaseTimeout: Duration

    public init(client: PostgresClient, apps: any AppStore, logger: Logger, databaseTimeout: Duration = .seconds(2)) {
        self.client = client
        self.apps = apps
        self.logger = logger
        self.databaseTimeout = databaseTimeout
    }

    /// Runs an admin change to the plugin's tables and its audit row in one transaction.
    public var transactions: AuditedTransaction { AuditedTransaction(client: client, logger: logger) }
}
