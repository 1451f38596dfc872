import Foundation
import GatewayTestSupport
import Testing

/// A plugin's database is made in one place, the PostgreSQL adapter, so the
/// adapter's reading of its client back (`PluginDatabase.postgres`) never
/// meets another kind: the initializer is `package`, and within the package
/// no other source file calls it.
@Suite struct PluginDatabaseMakerRuleTests {
    static let adapter = "Sources/GatewayPluginPostgres/PluginStorage+Postgres.swift"

    static func makers(in sources: [String: String]) -> [String] {
        sources.filter { $0.value.contains("PluginDatabase(") }.map(\.key).sorted()
    }

    @Test func onlyTheAdapterMakesAPluginDatabase() throws {
        var sources = try RawQueryRuleTests.gatewaySources()
        for top in ["Tests", "Profiles", "Benchmarks", "Fuzz/Targets"] {
            guard let walk = FileManager.default.enumerator(atPath: Repository.path(top)) else { continue }
            for case let path as String in walk where path.hasSuffix(".swift") && !path.contains(".build") {
                sources["\(top)/\(path)"] = try String(contentsOfFile: Repository.path("\(top)/\(path)"), encoding: .utf8)
            }
        }
        sources["Tests/HouseRuleTests/PluginDatabaseMakerRuleTests.swift"] = nil
        #expect(Self.makers(in: sources) == [Self.adapter])
        #expect(try String(contentsOfFile: Repository.path("Sources/GatewayPluginKit/Plugins/PluginStorage.swift"), encoding: .utf8)
            .contains("package init(connection: any Sendable"))
    }

    @Test func theRuleFindsAnotherMaker() {
        let sources = [Self.adapter: "PluginDatabase(connection: client)", "Plugins/X/Fake.swift": "let db = PluginDatabase(connection: 1) { _, _ in }"]
        #expect(Self.makers(in: sources) == ["Plugins/X/Fake.swift", Self.adapter])
    }
}
