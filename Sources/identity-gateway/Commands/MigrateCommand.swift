import GatewayApplication
import ArgumentParser
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply the database migrations this binary carries, then exit.")

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        try await reportingProblems {
            let configuration = try await GatewayConfiguration.load(file: options.config)
            let logger = bootstrapLogging(level: configuration.log.level, format: configuration.log.format)
            let applied = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                try await MigrationRunner(client: client, logger: logger).run(Migration.core + configuration.plugins.migrations)
            }
            say(applied.isEmpty ? "schema is current" : "applied: " + applied.joined(separator: ", "))
        }
    }
}
