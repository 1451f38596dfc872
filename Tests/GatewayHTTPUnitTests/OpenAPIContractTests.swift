import Foundation
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import Hummingbird
import Testing
import Yams

/// `openapi.yaml` describes every route the gateway serves, no more (that it
/// is a valid OpenAPI 3.1 document, a validator says: `OpenAPIDocumentTests`).
@Suite struct OpenAPIContractTests {
    @Test func everyRouteIsDescribedAndEveryDescribedRouteExists() async throws {
        let document = try #require(try Yams.load(yaml: String(contentsOf: openAPIDocumentURL, encoding: .utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        let methods: Set<String> = ["get", "put", "post", "patch", "delete", "head", "options"]
        let described = Set(paths.flatMap { path, item in
            (item as? [String: Any] ?? [:]).keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" }
        })

        try await MemoryGateway.with(plugins: .installed) { gateway in
            let router = GatewayRouter.make(gateway.dependencies)
            let served = Set(router.routes.map { "\($0.method.rawValue) \($0.path)" })
            #expect(served.subtracting(described).sorted() == [], "routes openapi.yaml does not describe")
            #expect(described.subtracting(served).sorted() == [], "routes openapi.yaml describes that do not exist")
        }
    }
}
