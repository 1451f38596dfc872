import ArgumentParser
import GatewayCore
import GatewayPostgres

/// Step two of a master-key rotation (docs/operations.md): with `master_key`
/// set to the new key and `master_key_previous` to the old one, re-seals
/// every app's private key under the new key.
struct ResealKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reseal-keys",
        abstract: "Re-seal every app's private key under master_key, opening it with master_key_previous.")

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        try await reportingProblems {
            let configuration = try await GatewayConfiguration.load(file: options.config)
            let masterKey = try configuration.requiredMasterKey()
            guard masterKey.hasPrevious else {
                throw ConfigurationProblems([
                    "master_key_previous (GATEWAY_MASTER_KEY_PREVIOUS) is required: the master key being retired, "
                        + "with master_key set to its replacement"
                ])
            }
            let logger = bootstrapLogging(level: configuration.logLevel, format: configuration.logFormat)
            let report: KeyResealer.Report
            do {
                report = try await withPostgresClient(configuration.databaseURL, logger: logger) { client in
                    try await KeyResealer(client: client, logger: logger).run(masterKey: masterKey)
                }
            } catch let unopenable as KeyResealer.UnopenableKeys {
                throw ValidationError(unopenable.description)
            }
            say("re-sealed \(report.resealed) key(s); \(report.alreadyCurrent) already under master_key")
        }
    }
}
