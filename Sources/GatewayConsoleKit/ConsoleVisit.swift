import Foundation
public import GatewayCore
public import GatewayPluginKit
public import HTTPTypes
public import Hummingbird
import NIOCore

/// One signed-in page view: the admin token the session acts with, who that
/// token is (from the API), and the calls the page makes with it.
public struct ConsoleVisit: Sendable {
    public let request: Request
    public let context: GatewayRequestContext
    public let api: AdminAPI
    public let token: AdminTokenSecret
    /// Echoed in every form; a post without it is refused.
    public let csrfToken: String
    /// Who the token is (`GET /admin/v1/me`).
    public let me: Me

    public struct Me: Sendable {
        public let id: String
        public let name: String
        public let scope: String

        public init(id: String, name: String, scope: String) {
            self.id = id
            self.name = name
            self.scope = scope
        }
    }

    public init(
        request: Request, context: GatewayRequestContext, api: AdminAPI, token: AdminTokenSecret, csrfToken: String, me: Me
    ) {
        self.request = request
        self.context = context
        self.api = api
        self.token = token
        self.csrfToken = csrfToken
        self.me = me
    }

    public var isOperator: Bool { me.scope == "operator" }

    /// The one app an app-scoped token covers; `nil` for operators.
    public var scopedAppID: String? {
        guard me.scope.hasPrefix("app:") else { return nil }
        return String(me.scope.dropFirst(4))
    }

    /// A path parameter of the page, percent-decoded.
    public func parameter(_ name: String) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    /// Calls the admin API with the session's token.
    public func call(
        _ method: HTTPRequest.Method, _ path: String, json: [String: JSONValue]? = nil, query: [(String, String?)] = []
    ) async -> APIAnswer {
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(bytes: JSONCoding.bytes(of: .object(json)))
        }
        let response = await api.call(method, Self.pathAndQuery(path, query), token: token, body: body, from: context)
        return await APIAnswer.read(response)
    }

    /// Calls the admin API with a body of another type (an NDJSON import).
    public func call(_ method: HTTPRequest.Method, _ path: String, body: String, contentType: String) async -> APIAnswer {
        let response = await api.call(
            method, path, token: token, body: ByteBuffer(string: body), contentType: contentType, from: context)
        return await APIAnswer.read(response)
    }

    /// The API's answer itself, for a download (an NDJSON export).
    public func stream(_ path: String, query: [(String, String?)], accept: String) async -> Response {
        await api.call(.get, Self.pathAndQuery(path, query), token: token, accept: accept, from: context)
    }

    public static func pathAndQuery(_ path: String, _ query: [(String, String?)]) -> String {
        let pairs = query.compactMap { name, value in value.map { "\(name)=\(ConsolePaths.escapeQuery($0))" } }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }
}
