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
    let migrationLockTimeout: Duration
    let isProduction: Bool
    let bootstrapAdminToken: AdminTokenSecret?
    let logger: Logger

    func run() async throws {
        let runner = MigrationRunner(client: client, logger: logger, lockTimeout: migrationLockTimeout)
        let migrations = Migration.core + plugins.migrations
        if migrateOnStart {
            try await runner.run(migrations)
        }
        let status = try await runner.status(migrations)
        guard status.canServe else {
            throw ConfigurationProblems([
                "the database schema is \(status.summary)"
                    + (status.pending.isEmpty ? "" : "; run `identity-gateway migrate` or set GATEWAY_MIGRATE_ON_START=true")
            ])
        }
        if !status.newer.isEmpty {
            // A rolling upgrade: a newer release migrated; this one serves until it is replaced.
            logger.notice("the database schema is \(status.summary)")
        }
        try await TokenProfileCheck.run(plugins.profiles, isProduction: isProduction, client: client, logger: logger)
        try await DurabilityCheck.warnIfUndurable(client: client, logger: logger)
        if let bootstrapAdminToken {
            try await BootstrapToken.seed(bootstrapAdminToken, client: client, logger: logger)
        }
    }
}
