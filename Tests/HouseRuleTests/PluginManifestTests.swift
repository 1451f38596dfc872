import Foundation
import GatewayTestSupport
import Testing

/// `Package.swift` declares what each plugin's folder holds (`parts`:
/// migrations, tests, console pages) instead of looking at the disk while
/// the manifest runs. The declaration is held to the folders here: a folder
/// not declared would not be built, embedded or tested.
@Suite struct PluginManifestTests {
    static let partFolders = ["migrations": "Migrations", "tests": "Tests", "console": "Console"]

    /// Each plugin's declared parts, read from the manifest's `credentialPlugins` entries.
    static func declaredParts(in manifest: String) -> [String: Set<String>] {
        var parts: [String: Set<String>] = [:]
        let entry = #/"(?<name>[A-Za-z]+)",\s*\[(?<parts>(?:\.(?:migrations|tests|console)(?:,\s*)?)*)\]/#
        for match in manifest.matches(of: entry) {
            let names = match.output.parts.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).dropFirst() }
            parts[String(match.output.name)] = Set(names.map(String.init))
        }
        return parts
    }

    @Test func everyPluginsDeclaredPartsAreItsFolders() throws {
        let manifest = try String(contentsOfFile: Repository.path("Package.swift"), encoding: .utf8)
        let start = try #require(manifest.range(of: "let credentialPlugins"))
        let end = try #require(manifest.range(of: "\n]\n", range: start.upperBound..<manifest.endIndex))
        let declared = Self.declaredParts(in: String(manifest[start.lowerBound..<end.lowerBound]))
        let plugins = try FileManager.default.contentsOfDirectory(atPath: Repository.path("Plugins")).filter {
            !$0.hasPrefix(".")
        }
        #expect(Set(declared.keys) == Set(plugins), "every plugin folder has its entry, and no entry lacks a folder")
        for plugin in plugins {
            let present = Set(Self.partFolders.filter { _, folder in
                FileManager.default.fileExists(atPath: Repository.path("Plugins/\(plugin)/\(folder)"))
            }.keys)
            #expect(declared[plugin] == present, "\(plugin)")
        }
    }

    @Test func theReaderFindsTheParts() {
        let manifest = #"    ("Alpha", [.tests], [], []),\#n    (\#n        "Beta", [.migrations, .tests, .console],\#n"#
        #expect(Self.declaredParts(in: manifest) == ["Alpha": ["tests"], "Beta": ["migrations", "tests", "console"]])
    }
}
