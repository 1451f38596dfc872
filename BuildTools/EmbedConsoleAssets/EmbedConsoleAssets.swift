import Foundation
import PackagePlugin

/// Embeds the console's `Assets/` (Mustache templates, the stylesheet and the
/// script), or a plugin's console templates (`Console/Templates/`), into its
/// target as Swift source, so a deployed binary serves the console without
/// the source tree or a resource bundle beside it.
@main
struct EmbedConsoleAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let assets = target.directoryURL.appending(path: "Assets")
        let folder = FileManager.default.fileExists(atPath: assets.path)
            ? assets : target.directoryURL.appending(path: "Console/Templates")
        let entries = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        let files = entries
            .filter { ["mustache", "css", "js"].contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedConsoleAssets.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) console asset(s) into \(target.name)",
                executable: try context.tool(named: "file-embedder").url,
                arguments: [output.path, "embeddedConsoleAssets"] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}
