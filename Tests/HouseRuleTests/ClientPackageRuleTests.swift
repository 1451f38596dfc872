import Foundation
import GatewayTestSupport
import Testing

/// The apps' client library resolves and builds nothing of the server
/// (docs/client.md): its package declares no dependency, and its sources
/// import Foundation, FoundationNetworking and Apple's frameworks only.
@Suite struct ClientPackageRuleTests {
    static let folder = "Clients/IdentityGatewayClient"

    @Test func thePackageDeclaresNoDependency() throws {
        let manifest = try String(contentsOfFile: Repository.path("\(Self.folder)/Package.swift"), encoding: .utf8)
        #expect(manifest.contains(".library(name: \"IdentityGatewayClient\""))
        #expect(!manifest.contains(".package("), "the client package must not depend on another package")
        #expect(!manifest.contains("dependencies: [\""), "the client target must not depend on another target")
    }

    @Test func itsSourcesImportOnlyThePlatform() throws {
        let allowed: Set<String> = ["Foundation", "FoundationNetworking", "Security", "AuthenticationServices"]
        let sources = Repository.path("\(Self.folder)/Sources")
        let walk = try #require(FileManager.default.enumerator(atPath: sources))
        var imports: [String: String] = [:]
        for case let path as String in walk where path.hasSuffix(".swift") {
            let text = try String(contentsOfFile: "\(sources)/\(path)", encoding: .utf8)
            for match in text.matches(of: #/(?m)^(?:public |internal |@preconcurrency )*import ([A-Za-z_]+)/#) {
                imports[String(match.output.1)] = path
            }
        }
        #expect(imports.count >= 2)
        #expect(Set(imports.keys).subtracting(allowed).isEmpty, "\(imports)")
    }
}
