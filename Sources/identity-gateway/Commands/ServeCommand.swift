import GatewayApplication
import ServiceLifecycle
import ArgumentParser

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve token requests (configuration from GATEWAY_* variables or --config).")

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        try await reportingProblems {
            let configuration = try await GatewayConfiguration.load(file: options.config)
            _ = try configuration.requiredMasterKey()
            let logger = bootstrapLogging(level: configuration.log.level, format: configuration.log.format)
            try await buildApplication(configuration, logger: logger).run()
        }
    }
}
