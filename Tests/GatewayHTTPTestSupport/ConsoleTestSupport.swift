import Foundation
public import GatewayConsole
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
public import HummingbirdTesting
import NIOCore
import Testing

/// A gateway with the console, over a fresh database, with every installed plugin.
public func withConsoleGateway(
    settings: ConsoleSettings = ConsoleSettings(), _ body: @Sendable (TestGateway) async throws -> Void
) async throws {
    try await TestGateway.with(plugins: .installed, frontEnds: console(settings), body)
}

/// A gateway with the console over memory, with every installed plugin:
/// the console's pages and forms, without a database.
public func withMemoryConsoleGateway(
    settings: ConsoleSettings = ConsoleSettings(), _ body: @Sendable (MemoryGateway) async throws -> Void
) async throws {
    try await MemoryGateway.with(plugins: .installed, frontEnds: console(settings), body)
}

/// The console as the admin API's front end, with every installed plugin's pages.
private func console(_ settings: ConsoleSettings) -> TestGateway.FrontEnds {
    { stores, masterKey in
        [try Console(settings: settings, sessions: stores.consoleSessions, masterKey: masterKey, plugins: .installed)]
    }
}

/// What a browser keeps between requests: its cookies. Forms are posted as
/// a browser posts them (url-encoded), with the CSRF token the last page carried.
public struct ConsoleBrowser {
    public let client: any TestClientProtocol
    public var cookies: [String: String] = [:]
    /// The CSRF token of the last page that had a form.
    public var csrf: String?

    public init(_ client: any TestClientProtocol) {
        self.client = client
    }

    @discardableResult
    public mutating func get(_ path: String) async throws -> TestResponse {
        let response = try await client.execute(uri: path, method: .get, headers: cookieHeader(), body: nil)
        remember(response)
        return response
    }

    @discardableResult
    public mutating func post(_ path: String, _ fields: [(String, String)], csrf sent: String?? = .none) async throws -> TestResponse {
        var all = fields
        let token: String? = sent ?? csrf
        if let token { all.append(("csrf", token)) }
        var headers = cookieHeader()
        headers[.contentType] = "application/x-www-form-urlencoded"
        let body = all.map { "\(Self.encode($0.0))=\(Self.encode($0.1))" }.joined(separator: "&")
        let response = try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
        remember(response)
        return response
    }

    /// Signs in with `token` through the sign-in form.
    public mutating func signIn(_ token: String) async throws {
        try await get("/console/sign-in")
        let response = try await post("/console/sign-in", [("token", token), ("next", "/console")])
        #expect(response.status == .seeOther, "sign-in: \(text(response))")
        try await get("/console/validator")
    }

    private func cookieHeader() -> HTTPFields {
        guard !cookies.isEmpty else { return [:] }
        return [.cookie: cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")]
    }

    private mutating func remember(_ response: TestResponse) {
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0])
            let value = pair.count > 1 ? String(pair[1]) : ""
            if value.isEmpty || header.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        if let token = Self.csrf(in: text(response)) { csrf = token }
    }

    public static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    public static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? ""
    }
}

extension TestResponse {
    public var location: String { headers[.location] ?? "" }
}

/// The id of the admin token `name`, as the admin API lists it.
public func adminTokenID(named name: String, _ gateway: some GatewayUnderTest) async throws -> String {
    let operatorToken = try await gateway.operatorToken()
    let listed = try jsonObject(try await gateway.admin(.get, "/admin/v1/admin_tokens", token: operatorToken, json: nil))
    let items = listed["items"] as? [[String: Any]] ?? []
    guard let id = items.first(where: { $0["name"] as? String == name })?["id"] as? String else {
        throw TestFailure("no token named \(name)")
    }
    return id
}

/// A test's own failure, with what it could not find.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
