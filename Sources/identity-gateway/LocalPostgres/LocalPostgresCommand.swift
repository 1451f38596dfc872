import ArgumentParser
import Foundation

/// Starts and stops a private PostgreSQL cluster: the test script's throwaway
/// database, and the one `dev` uses.
struct LocalPostgresCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "local-postgres",
        abstract: "Start or stop a local PostgreSQL cluster in a folder (for development and tests).",
        subcommands: [Start.self, Stop.self])

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create if needed, start, and print the database URL.")
        @Option(help: "The cluster's folder.") var dataDir: String
        @Option(help: "The port on 127.0.0.1.") var port = 54329
        @Flag(help: "Turn durability off (fsync, full-page writes): faster, for throwaway test clusters.")
        var throwaway = false

        func run() throws {
            let cluster = LocalPostgresCluster(
                folder: URL(fileURLWithPath: dataDir).standardizedFileURL, port: port, throwaway: throwaway)
            say(try cluster.start())
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop the cluster if it runs.")
        @Option(help: "The cluster's folder.") var dataDir: String

        func run() throws {
            try LocalPostgresCluster(folder: URL(fileURLWithPath: dataDir).standardizedFileURL, port: 0).stop()
        }
    }
}
