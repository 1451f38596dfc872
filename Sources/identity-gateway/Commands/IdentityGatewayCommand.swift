import GatewayApplication
import ArgumentParser
import Foundation
import GatewayPostgres
import PostgresNIO
import Logging

@main
struct IdentityGatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity-gateway",
        abstract: "A multi-tenant identity gateway that mints Layer identity tokens.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, AdminCommand.self, DevCommand.self, LocalPostgresCommand.self,
            CalibrateArgon2Command.self, ResealKeysCommand.self, MaintainCommand.self,
        ]
    )
}

/// Options every command that reads configuration shares.
struct ConfigurationOptions: ParsableArguments {
    @Option(name: .long, help: "A YAML configuration file (also GATEWAY_CONFIG_FILE); environment variables win over it.")
    var config: String?
}

/// Prints configuration problems plainly and exits non-zero.
func reportingProblems<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let problems as ConfigurationProblems {
        throw ValidationError(problems.description)
    } catch let error as PSQLError {
        throw ValidationError("database: \(PostgresErrorText.describe(error))")
    }
}

/// Writes a line to standard output at once (no stdio buffering), so a
/// supervisor or a script reading a pipe sees it while the server runs.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
