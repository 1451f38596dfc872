import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import Yams

/// Who may call what, on every admin route the router serves: the list is
/// read from the router itself (the installed plugins' routes too), and each
/// route's scope from its operation's `x-scope` in `openapi.yaml`
/// (`operator`, or `app`: an app's own admin may call it). A route added
/// without a scope fails here, and so does one whose scope check answers
/// otherwise. The calls carry made-up ids and empty bodies, so what is
/// asserted is the scope's verdict alone (the 2xx of a well-formed call is
/// `AdminScopeMatrixTests`').
@Suite struct AdminScopeByRouteTests {
    /// One admin route as the router serves it, with its documented scope.
    struct ScopedRoute: Sendable, CustomStringConvertible {
        let method: String
        let path: String
        let scope: Scope
        var operatorOnly: Bool { scope == .operator }
        /// Whether the path names an app: another app's token must see 404 there.
        var targetsApp: Bool { path.hasPrefix("/admin/v1/apps/{") }
        var description: String { "\(method) \(path)" }
    }

    /// Who may call a route, as its operation's `x-scope` says.
    enum Scope: String, Sendable {
        case `operator`, app, any
    }

    /// What `routes(served:document:)` could not place.
    struct Unscoped: Error, CustomStringConvertible {
        let routes: [String]
        var description: String { "admin routes with no x-scope in openapi.yaml: \(routes.joined(separator: ", "))" }
    }

    /// Every served admin route (`"METHOD /path"`), with its operation's scope; throws naming those without one.
    static func routes(served: [String], scopes: [String: Scope]) throws -> [ScopedRoute] {
        var scoped: [ScopedRoute] = []
        var missing: [String] = []
        for route in served.sorted() where route.split(separator: " ")[1].hasPrefix("/admin/v1/") {
            let parts = route.split(separator: " ").map(String.init)
            guard let scope = scopes[route] else {
                missing.append(route)
                continue
            }
            scoped.append(ScopedRoute(method: parts[0], path: parts[1], scope: scope))
        }
        guard missing.isEmpty else { throw Unscoped(routes: missing) }
        return scoped
    }

    /// Each documented operation's `x-scope`, by `"METHOD /path"`.
    static func documentedScopes() throws -> [String: Scope] {
        let document = try #require(try Yams.load(yaml: String(contentsOf: openAPIDocumentURL, encoding: .utf8)) as? [String: Any])
        var scopes: [String: Scope] = [:]
        for (path, item) in document["paths"] as? [String: Any] ?? [:] {
            for (method, operation) in item as? [String: Any] ?? [:] {
                guard let scope = ((operation as? [String: Any])?["x-scope"] as? String).flatMap(Scope.init) else { continue }
                scopes["\(method.uppercased()) \(path)"] = scope
            }
        }
        return scopes
    }

    /// `path` with its app's id and a made-up value for every other parameter.
    static func concrete(_ path: String, app: AppSettings) -> String {
        var result = ""
        var rest = Substring(path)
        var first = true
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            let isApp = first && result.hasSuffix("/apps/")
            result += isApp ? app.appID.description : "made-up-\(rest[rest.index(after: open)..<close])"
            first = false
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    enum Caller: String, CaseIterable {
        case operatorToken, appAToken, appBToken, noToken, revokedToken, expiredToken, garbageToken
    }

    @Test(arguments: Caller.allCases)
    func everyServedAdminRouteAnswersEachCallerAsItsDocumentedScopeAllows(_ caller: Caller) async throws {
        let scopes = try Self.documentedScopes()
        // Each bad token is a failure the deployment's admin_auth_failures counts: room for one a route.
        var limits = RateLimitSettings()
        limits.policies[RateLimitPolicy.adminAuthFailures.name] = RateLimitPolicy.adminAuthFailures.with(
            limit: 1_000, periodSeconds: 600)
        try await MemoryGateway.with(plugins: .installed, rateLimits: limits) { gateway in
            let served = GatewayRouter.make(gateway.dependencies).routes.map { "\($0.method.rawValue) \($0.path)" }
            let routes = try Self.routes(served: served, scopes: scopes)
            #expect(routes.count >= 40, "\(routes.count) admin routes")
            let appA = try await gateway.createApp { $0.name = "App A confidential" }
            let appB = try await gateway.createApp { $0.name = "App B" }
            let token: String? =
                switch caller {
                case .operatorToken: try await gateway.adminToken(.operator)
                case .appAToken: try await gateway.adminToken(.app(appA.appID))
                case .appBToken: try await gateway.adminToken(.app(appB.appID))
                case .noToken: nil
                case .revokedToken: try await gateway.adminToken(.operator, revoked: true)
                case .expiredToken: try await gateway.adminToken(.operator, expiresAt: Date().addingTimeInterval(-1))
                case .garbageToken: "igw_" + String(repeating: "x", count: 43)
                }
            // Deleting app A goes last: every other route is called on it.
            let deletesTheApp = { (route: ScopedRoute) in route.method == "DELETE" && route.path == "/admin/v1/apps/{app_id}" }
            for route in routes.filter({ !deletesTheApp($0) }) + routes.filter(deletesTheApp) {
                let method = HTTPRequest.Method(rawValue: route.method)!
                let hasBody = ["POST", "PUT", "PATCH"].contains(route.method)
                let response = try await gateway.admin(
                    method, Self.concrete(route.path, app: appA), token: token, json: hasBody ? [:] : nil)
                let status = response.status.code
                switch caller {
                case .operatorToken:
                    #expect(status != 401 && status != 403, "\(route): \(status)")
                case .appAToken:
                    if route.operatorOnly {
                        #expect(status == 403, "\(route): \(status)")
                    } else {
                        #expect(status != 401 && status != 403, "\(route): \(status)")
                    }
                case .appBToken:
                    switch route.scope {
                    case .any: #expect(status != 401 && status != 403, "\(route): \(status)")
                    case .app, .operator: #expect(route.targetsApp ? status == 404 : status == 403, "\(route): \(status)")
                    }
                    #expect(!String(buffer: response.body).contains("confidential"), "\(route)")
                case .noToken, .revokedToken, .expiredToken, .garbageToken:
                    #expect(status == 401, "\(route): \(status)")
                }
            }
        }
    }

    /// A route the document gives no scope, say one a test adds, is named.
    @Test func aRouteWithNoDocumentedScopeIsFound() throws {
        let scopes = try Self.documentedScopes()
        let served = ["GET /admin/v1/apps", "POST /admin/v1/apps/{app_id}/made_up_things"]
        #expect(throws: Unscoped.self) { try Self.routes(served: served, scopes: scopes) }
        #expect(try Self.routes(served: ["GET /admin/v1/apps"], scopes: scopes).map(\.scope) == [.operator])
    }
}
