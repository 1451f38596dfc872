import GatewayApplication
import ArgumentParser
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply the database migrations this binary carries, then exit.",
        discussion: """
            With --check, change nothing: say what would run and whether this binary can serve the database as it is. \
            Exit status 0: it can (the schema is current, or a newer release only expanded it); 1: it can once \
            migrated; 2: it cannot (a newer release removed or changed what this one reads).
            """)

    @OptionGroup var options: ConfigurationOptions

    @Flag(name: .long, help: "Say what would run and whether this binary can serve the database; change nothing.")
    var check = false

    func run() async throws {
        try await reportingProblems {
            let configuration = try await GatewayConfiguration.load(file: options.config)
            let logger = bootstrapLogging(level: configuration.log.level, format: configuration.log.format)
            let migrations = Migration.core + configuration.plugins.migrations
            let lockTimeout = Duration.milliseconds(configuration.database.migrationLockTimeoutMilliseconds)
            if check {
                let status = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                    try await MigrationRunner(client: client, logger: logger, lockTimeout: lockTimeout).status(migrations)
                }
                Self.report(status)
                if !status.canServe { throw ExitCode(status.newer.allSatisfy(\.expandsOnly) ? 1 : 2) }
                return
            }
            let applied = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                try await MigrationRunner(client: client, logger: logger, lockTimeout: lockTimeout).run(migrations)
            }
            say(applied.isEmpty ? "schema is current" : "applied: " + applied.joined(separator: ", "))
        }
    }

    static func report(_ status: SchemaStatus) {
        say("database schema: \(status.summary)")
        for migration in status.pending {
            let kind = MigrationReview.expandsOnly(migration) ? "expands" : "contracts"
            say("would apply: \(migration.source)/\(migration.name) (\(kind))")
        }
        for newer in status.newer {
            say("applied by a newer release: \(newer.name) (\(newer.expandsOnly ? "expands" : "contracts"))")
        }
        if status.canServe {
            say("this binary can serve it as it is")
        } else if status.newer.allSatisfy(\.expandsOnly) {
            say("this binary can serve it once migrated (identity-gateway migrate)")
        } else {
            say("this binary cannot serve it")
        }
    }
}
