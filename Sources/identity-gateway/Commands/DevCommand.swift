import GatewayApplication
import ServiceLifecycle
import ArgumentParser
import Foundation
import GatewayCore

struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run the gateway with its own local PostgreSQL and a demo app, for trying it out.",
        discussion: """
            Everything lives in the data folder: the PostgreSQL cluster, the generated master key and \
            the server log. Stop with Ctrl-C; PostgreSQL stops with the gateway. Never use this in production.
            """)

    @Option(help: "The folder for the local cluster and the master key.")
    var dataDir = ".gateway-dev"
    @Option(help: "The gateway's HTTP port on 127.0.0.1.")
    var port = 8080
    @Option(help: "The local PostgreSQL's port on 127.0.0.1.")
    var postgresPort = 54329

    func run() async throws {
        let folder = URL(fileURLWithPath: dataDir).standardizedFileURL
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let masterKeyText = try Self.masterKey(in: folder)
        let consoleToken = try Self.consoleToken(in: folder)
        let cluster = try LocalPostgresCluster.inside(folder, port: postgresPort)
        say("starting PostgreSQL in \(cluster.folder.path) on 127.0.0.1:\(postgresPort) ...")
        let databaseURL = try cluster.start()
        defer {
            do { try cluster.stop() } catch { say("stopping PostgreSQL failed: \(error)") }
        }
        try await reportingProblems {
            let configuration = try await GatewayConfiguration.load(
                file: nil,
                overrides: [
                    "database.url": databaseURL, "master_key": masterKeyText, "http.port": "\(port)",
                    "migrate_on_start": "true", "mode": "development",
                ])
            let logger = bootstrapLogging(level: configuration.log.level, format: .text)
            let masterKey = try configuration.requiredMasterKey()
            let port = self.port
            let application = try buildApplication(configuration, logger: logger) { client in
                try await DemoApp.seed(client: client, masterKey: masterKey, logger: logger)
                try await DemoApp.seedConsoleToken(consoleToken, client: client, logger: logger)
                say(DemoApp.instructions(port: port, consoleToken: consoleToken))
            }
            try await application.run()
        }
    }

    /// The folder's master key, generated on first use and readable by its owner only.
    static func masterKey(in folder: URL) throws -> String {
        try ownerOnlySecret("master.key", in: folder) { MasterKey.generateBase64() }
    }

    /// The operator token the console's sign-in is printed with, kept beside the master key.
    static func consoleToken(in folder: URL) throws -> AdminTokenSecret {
        AdminTokenSecret(text: try ownerOnlySecret("console.token", in: folder) { AdminTokenSecret.generate().text })
    }

    /// A secret in `name` in the folder, generated on first use, readable by its owner only.
    private static func ownerOnlySecret(_ name: String, in folder: URL, generate: () -> String) throws -> String {
        let file = folder.appending(path: name)
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            return existing.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let generated = generate()
        guard FileManager.default.createFile(
            atPath: file.path, contents: Data((generated + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw LocalPostgresError("cannot write \(file.path)") }
        return generated
    }
}
