public import GatewayPostgres
public import Logging
public import PostgresNIO

/// What the gateway lends a plugin: its database and its logger. A plugin
/// builds its own repositories over them.
public struct PluginServices: Sendable {
    public let client: PostgresClient
    public let logger: Logger
    /// How long a token request's database step may take before it is
    /// answered 503 `unavailable`.
    public let databaseTimeout: Duration

    public init(client: PostgresClient, logger: Logger, databaseTimeout: Duration = .seconds(2)) {
        self.client = client
        self.logger = logger
        self.databaseTimeout = databaseTimeout
    }

    /// Runs an admin change and its audit row in one transaction.
    public var transactions: AuditedTransaction { AuditedTransaction(client: client, logger: logger) }
}
