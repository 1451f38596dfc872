import ArgumentParser
import GatewayApplication
import GatewayPostgres

struct MaintainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "maintain", abstract: "Run one maintenance pass now, say what it did, then exit.",
        discussion: """
            The pass every replica runs each minute: audit partitions for the months ahead, those past \
            audit.retention_days detached concurrently and dropped, and expired counters, ended sessions, \
            spent human-check tokens and old second-step tickets deleted a few thousand rows a statement. \
            For a schedule of your own, or to see at once what a shorter retention removes.
            """)

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        try await reportingProblems {
            let configuration = try await GatewayConfiguration.load(file: options.config)
            let logger = bootstrapLogging(level: configuration.log.level, format: configuration.log.format)
            let pass = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                try await AuditMaintenance(client: client, logger: logger, retentionDays: configuration.auditRetentionDays).runOnce()
            }
            say(pass.description)
        }
    }
}
