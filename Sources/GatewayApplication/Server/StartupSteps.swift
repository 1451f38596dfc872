import GatewayCore
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import Logging
import PostgresNIO

/// What runs once the database is reachable, before the first request: the
/// schema brought current (or checked so), the apps' token profiles
/// checked, a warning when commits are not durable, and the bootstrap
/// operator token seeded.
struct StartupSteps: Sendable {
    let client: PostgresClient
    let plugins: PluginRegistry
    let migrateOnStart: Bool
    let isProduction: Bool
    let bootstrapAdminToken: AdminTokenSecret?
    let logger: Logger

    func run() async throws {
        let runner = MigrationRunner(client: client, logger: logger)
        if migrateOnStart {
            try await runner.run(Migration.core + plugins.migrations)
        } else {
            let pending = try await runner.pending(Migration.core + plugins.migrations)
            guard pending.isEmpty else {
                throw ConfigurationProblems([
                    "the database schema is behind by \(pending.count) migration(s); run `identity-gateway migrate` "
                        + "or set GATEWAY_MIGRATE_ON_START=true"
                ])
            }
        }
        try await TokenProfileCheck.run(plugins.profiles, isProduction: isProduction, client: client, logger: logger)
        try await DurabilityCheck.warnIfUndurable(client: client, logger: logger)
        if let bootstrapAdminToken {
            try await BootstrapToken.seed(bootstrapAdminToken, client: client, logger: logger)
        }
    }
}
