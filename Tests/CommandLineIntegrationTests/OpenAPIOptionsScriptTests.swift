import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import Testing

/// `scripts/openapi-options` is how a declared option reaches `openapi.yaml`
/// (CONTRIBUTING.md, "Add an option to a plugin"): its rewriter, given what
/// `OptionSchemaDocumentTests` prints for a section that drifted, puts back
/// the declaration byte for byte and touches no other section.
@Suite struct OpenAPIOptionsScriptTests {
    @Test func theRewriterPutsBackEveryDriftedDeclaration() async throws {
        let original = try String(contentsOfFile: Repository.path("openapi.yaml"), encoding: .utf8)
        let declared = PluginRegistry.installed.optionSchemas
        #expect(declared.count >= 4)
        // Every declared section drifts: its bounds moved, a switch became a string.
        var drifted = original
        var printed = ""
        for (_, schema) in declared {
            let section = try #require(original.range(of: "\n    \(schema.name):\n"), "\(schema.name) is in the document")
            let end = original[section.upperBound...].range(of: "\n\n    ")?.lowerBound ?? original.endIndex
            let text = String(original[section.upperBound..<end])
            let changed = text.replacingOccurrences(of: "maximum: ", with: "maximum: 1")
                .replacingOccurrences(of: "type: boolean", with: "type: string")
            #expect(changed != text)
            drifted = drifted.replacingOccurrences(of: text, with: changed)
            let json = String(decoding: JSONCoding.bytes(of: schema.jsonSchema, indented: true), as: UTF8.self)
            printed += "openapi.yaml's \(schema.name) differs from the declaration; the declaration as JSON:\n"
            printed += json.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        #expect(drifted != original)
        let folder = FileManager.default.temporaryDirectory.appending(path: "openapi-options-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let document = folder.appending(path: "openapi.yaml")
        let output = folder.appending(path: "test-output.txt")
        try drifted.write(to: document, atomically: true, encoding: .utf8)
        try printed.write(to: output, atomically: true, encoding: .utf8)
        let run = try await GatewayProcess.runProgram(
            "/usr/bin/python3", [Repository.path("scripts/lib/openapi-options.py"), output.path, document.path],
            environment: ProcessInfo.processInfo.environment)
        #expect(run.status == 0, "\(run.output)")
        #expect(try String(contentsOf: document, encoding: .utf8) == original, "the rewritten document is the committed one")
    }
}
