import Foundation
import GatewayTestSupport
import Testing

/// JSON is read and written one way (``JSONCoding``: the strict reader, the
/// one writer): the gateway's code, its plugins, profiles and benchmarks
/// make no `JSONEncoder`, `JSONDecoder` or `JSONSerialization` of their own.
/// Tests may, as judges; the client package may, having no dependency.
@Suite struct OneJSONRuleTests {
    /// Lines that reach for another JSON coder, doc comments and comments aside.
    static func otherCoders(in source: String) -> [String] {
        source.split(separator: "\n").map(String.init).filter { line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            return code.firstMatch(of: #/(?:^|[^A-Za-z0-9_])(JSONEncoder|JSONDecoder|JSONSerialization)(?![A-Za-z0-9_])/#) != nil
        }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func noOtherJSONCoderIsMade() throws {
        var sources = try RawQueryRuleTests.gatewaySources()
        for top in ["Profiles", "Benchmarks"] {
            guard let walk = FileManager.default.enumerator(atPath: Repository.path(top)) else { continue }
            for case let path as String in walk where path.hasSuffix(".swift") && !path.contains("/Tests/") && !path.contains(".build") {
                sources["\(top)/\(path)"] = try String(contentsOfFile: Repository.path("\(top)/\(path)"), encoding: .utf8)
            }
        }
        #expect(sources.keys.contains { $0.hasPrefix("Profiles/") } && sources.keys.contains { $0.hasPrefix("Benchmarks/") })
        let offenders = sources.compactMapValues { source in
            let lines = Self.otherCoders(in: source)
            return lines.isEmpty ? nil : lines
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }

    @Test func theRuleFindsAnotherCoder() {
        let source = """
            /// Unlike `JSONDecoder`, strict.
            let data = try JSONEncoder().encode(value) // JSONDecoder in a comment
            let object = try JSONSerialization.jsonObject(with: data)
            let bytes = try JSONCoding.bytes(of: value)
            """
        #expect(Self.otherCoders(in: source).count == 2)
    }
}
