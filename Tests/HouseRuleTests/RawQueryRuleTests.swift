import Foundation
import GatewayTestSupport
import Testing

/// The gateway's code never calls PostgresNIO's `query`, `execute` or
/// `withTransaction` itself (CONTRIBUTING, "Add a credential plugin"):
/// across a failover they never answer, or answer before the commit. Every
/// statement goes through GatewayPostgres's `tracedQuery`, `tracedExecute`,
/// `committedQuery`, `committedExecute` or `transaction(logger:)`, which are
/// the only callers allowed. Read from every source file that imports PostgresNIO.
@Suite struct RawQueryRuleTests {
    /// The files that wrap the raw calls, and so may make them.
    static let wrappers: Set<String> = ["Sources/GatewayPostgres/TracedQueries.swift", "Sources/GatewayPostgres/Transactions.swift"]

    /// The raw calls in `source`, one line each, declarations aside.
    static func rawCalls(in source: String) -> [String] {
        guard source.contains("import PostgresNIO") else { return [] }
        return source.split(separator: "\n").map(String.init).filter { line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let rawCall = #/(?:^|[^A-Za-z0-9_])(query|execute|withTransaction)\(/#
            return !code.contains("func ") && code.firstMatch(of: rawCall) != nil
        }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The gateway's own source files (its modules and its plugins, not their tests), by path.
    static func gatewaySources() throws -> [String: String] {
        var sources: [String: String] = [:]
        for top in ["Sources", "Plugins"] {
            guard let walk = FileManager.default.enumerator(atPath: Repository.path(top)) else { continue }
            for case let path as String in walk where path.hasSuffix(".swift") && !path.contains("/Tests/") {
                sources["\(top)/\(path)"] = try String(contentsOfFile: Repository.path("\(top)/\(path)"), encoding: .utf8)
            }
        }
        return sources
    }

    @Test func noStatementGoesPastTheWrappers() throws {
        let sources = try Self.gatewaySources()
        #expect(sources.count > 100)
        let offenders = sources.filter { !Self.wrappers.contains($0.key) }.compactMapValues { source in
            let calls = Self.rawCalls(in: source)
            return calls.isEmpty ? nil : calls
        }
        #expect(offenders.isEmpty, "\(offenders)")
        // The wrappers are where the raw calls are: a rule that finds none there reads nothing.
        for wrapper in Self.wrappers { #expect(!Self.rawCalls(in: sources[wrapper] ?? "").isEmpty, "\(wrapper)") }
    }

    @Test func theRuleFindsARawCall() {
        let source = """
            import PostgresNIO
            func read(_ client: Database) async throws {
                // client.query("in a comment") is no call
                let rows = try await client.query("SELECT 1", logger: logger)
                try await client.withTransaction(logger: logger) { _ in }
                _ = try await client.tracedQuery("SELECT 1", logger: logger)
            }
            """
        #expect(Self.rawCalls(in: source).count == 2)
        #expect(Self.rawCalls(in: source.replacingOccurrences(of: "import PostgresNIO", with: "")) == [])
    }
}
