import Foundation
import GatewayTestSupport
import Testing

/// Test targets are what their names say. A unit target (any `*Tests`
/// target not named `*IntegrationTests`, the plugins' aside) starts no
/// process and needs no database, so `swift test` with nothing installed
/// runs it whole; an integration target holds no test file that needs
/// neither, so what it costs buys something. Read from the sources, by the
/// marks a test leaves when it reaches out (`GatewayProcess`, `TestDatabase`, ...).
@Suite struct TestTargetRuleTests {
    /// What a test file writes when it starts a program or reads a tool's path from the suite's environment.
    static let processMarks = ["GatewayProcess.", "Process()", "SpawnedChild", "SuiteEnvironment.value("]
    /// What a test file writes when it needs PostgreSQL.
    static let databaseMarks = [
        "TestDatabase", "TestGateway.with", "withTwoInstances", "withConsoleGateway", "ClientGateway.with", "PostgresClient",
    ]

    /// A unit target's files that reach out, by target: `"Target/File.swift: mark"`.
    static func reachingOut(in targets: [String: [String: String]]) -> [String] {
        var found: [String] = []
        for (target, files) in targets where !isIntegration(target) {
            for (name, source) in files {
                for mark in processMarks + databaseMarks where source.contains(mark) { found.append("\(target)/\(name): \(mark)") }
            }
        }
        return found.sorted()
    }

    /// An integration target's test files that reach out for nothing.
    static func needingNothing(in targets: [String: [String: String]]) -> [String] {
        var found: [String] = []
        for (target, files) in targets where isIntegration(target) {
            for (name, source) in files where source.contains("@Test") {
                if !(processMarks + databaseMarks).contains(where: source.contains) { found.append("\(target)/\(name)") }
            }
        }
        return found.sorted()
    }

    static func isIntegration(_ target: String) -> Bool { target.hasSuffix("IntegrationTests") }

    /// Every test target's Swift files, by target and path: the folders of `Tests/` named `*Tests`.
    static func testTargets() throws -> [String: [String: String]] {
        let tests = URL(fileURLWithPath: Repository.path("Tests"))
        var targets: [String: [String: String]] = [:]
        for folder in try FileManager.default.contentsOfDirectory(atPath: tests.path) where folder.hasSuffix("Tests") {
            let root = tests.appending(path: folder)
            guard let walk = FileManager.default.enumerator(atPath: root.path) else { continue }
            var files: [String: String] = [:]
            for case let path as String in walk where path.hasSuffix(".swift") {
                files[path] = try String(contentsOf: root.appending(path: path), encoding: .utf8)
            }
            targets[folder] = files
        }
        return targets
    }

    @Test func aUnitTargetStartsNoProcessAndNeedsNoDatabase() throws {
        let targets = try Self.testTargets()
        #expect(targets.count >= 15, "\(targets.keys.sorted())")
        // This file names the marks it looks for: it is the one file that may.
        var scanned = targets
        scanned["HouseRuleTests"]?["TestTargetRuleTests.swift"] = nil
        #expect(Self.reachingOut(in: scanned) == [])
    }

    @Test func anIntegrationTargetHoldsNoTestThatNeedsNothing() throws {
        #expect(Self.needingNothing(in: try Self.testTargets()) == [])
    }

    /// The rules find what they are for: a unit test that runs a program, an integration test that needs nothing.
    @Test func theRulesFindAMisplacedTest() {
        let targets = [
            "GatewayCoreTests": ["Judge.swift": "@Test func f() async throws { _ = try await GatewayProcess.runProgram(\"/bin/true\", []) }"],
            "GatewayPostgresIntegrationTests": ["Pure.swift": "@Test func g() { #expect(1 + 1 == 2) }"],
        ]
        #expect(Self.reachingOut(in: targets) == ["GatewayCoreTests/Judge.swift: GatewayProcess."])
        #expect(Self.needingNothing(in: targets) == ["GatewayPostgresIntegrationTests/Pure.swift"])
    }
}
