import GatewayApplication
import ArgumentParser
import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import Logging
import PostgresNIO

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
            let logger = bootstrapLogging(level: configuration.log.level, format: configuration.log.format)
            let report: KeyResealer.Report
            do {
                report = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                    try await KeyResealer(client: client, logger: logger).run(masterKey: masterKey)
                }
            } catch let unopenable as KeyResealer.UnopenableKeys {
                throw ValidationError(unopenable.description)
            }
            say("re-sealed \(report.resealed) key(s); \(report.alreadyCurrent) already under master_key")
            // Every plugin whose secrets an app may hold, whatever this deployment's mode offers.
            let plugins = configuration.everyPlugin()
            let secrets = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                try await Self.resealPluginSecrets(plugins: plugins, masterKey: masterKey, client: client, logger: logger)
            }
            say("re-sealed \(secrets) plugin secret(s) (SMS sender secrets, static test users' passwords)")
            let factors = try await withPostgresClient(configuration.database.url, logger: logger) { client in
                try await SecondFactorResealer(client: client, logger: logger).run(masterKey: masterKey)
            }
            say("re-sealed \(factors.resealed) TOTP secret(s)")
            if factors.unopenable > 0 {
                say("\(factors.unopenable) TOTP secret(s) open under neither key and were left as they are: reset those users' factors")
            }
        }
    }

    /// Re-seals every app's plugin secrets under the current key, one app a
    /// transaction with its audit row; returns how many secrets changed.
    static func resealPluginSecrets(
        plugins: PluginRegistry, masterKey: MasterKey, client: PostgresClient, logger: Logger
    ) async throws -> Int {
        let apps = AppRepository(client: client, logger: logger)
        let transactions = AuditedTransaction(client: client, logger: logger)
        var total = 0
        var cursor: AppID?
        while true {
            let page = try await apps.list(after: cursor, limit: 200)
            for stored in page {
                let appID = stored.settings.appID
                // Read locked in the write's transaction: an admin's change made meanwhile is resealed, not lost.
                total += try await transactions.run(
                    { connection -> Int in
                        guard let current = try await apps.find(appID, lockingOn: connection) else { return 0 }
                        let (resealed, changed) = try plugins.resealingSecrets(of: current.settings, with: masterKey)
                        if changed > 0 { _ = try await apps.update(resealed, on: connection) }
                        return changed
                    },
                    recording: { changed in
                        guard changed > 0 else { return nil }
                        return AuditEvent(
                            appID: appID, event: "admin.plugin_secrets.resealed", outcome: .success,
                            requestID: "reseal-keys-\(UUID().lowercasedText)", detail: ["resealed": "\(changed)"])
                    })
            }
            guard page.count == 200, let last = page.last else { return total }
            cursor = last.settings.appID
        }
    }
}
