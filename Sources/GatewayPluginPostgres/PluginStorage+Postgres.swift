public import GatewayPluginKit
import GatewayPostgres
public import PostgresNIO

/// The gateway's PostgreSQL as the plugins see it: the storage a running
/// gateway lends them, and the client their SQL stores open. The plugin API
/// (GatewayPluginKit) names no database driver; a plugin's PostgreSQL store
/// and the assembly that lends the database import this.
extension PluginStorage {
    /// The gateway's PostgreSQL, whose tables the plugins' migrations made.
    public static func postgres(_ client: PostgresClient) -> PluginStorage {
        .database(
            PluginDatabase(connection: client) { event, logger in
                try await AuditedTransaction(client: client, logger: logger).run(recording: event) { _ in }
            })
    }
}

extension PluginDatabase {
    /// The PostgreSQL client ``PluginStorage/postgres(_:)`` lent. Every
    /// database a gateway lends is made there (``PluginDatabase``'s
    /// initializer is the package's, and `PluginDatabaseMakerRuleTests`
    /// holds its one caller to this file), so the client is always one.
    public var postgres: PostgresClient {
        // The plugin API names no driver, so the client crosses it untyped; made only above, it is a PostgresClient.
        connection as! PostgresClient
    }
}
