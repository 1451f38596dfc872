import Foundation
import PackagePlugin

/// Embeds `.sql` files into a target as Swift source (`embeddedMigrations`),
/// so a deployed binary carries its schema and never needs the source tree or
/// a resource bundle beside it. A plugin's files are in its own `Migrations/`
/// folder; the target without one (GatewayPostgres) gets the core schema, the
/// package's top-level `Migrations/`.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let own = target.directoryURL.appending(path: "Migrations")
        let folder = FileManager.default.fileExists(atPath: own.path)
            ? own : context.package.directoryURL.appending(path: "Migrations")
        let entries = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        let sqlFiles = entries
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(sqlFiles.count) migration(s) into \(target.name)",
                executable: try context.tool(named: "file-embedder").url,
                arguments: [output.path, "embeddedMigrations"] + sqlFiles.map(\.path),
                inputFiles: sqlFiles,
                outputFiles: [output]
            )
        ]
    }
}
