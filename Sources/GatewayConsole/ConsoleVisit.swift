import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import HTTPTypes
import Hummingbird
import NIOCore

/// One signed-in page view: the admin token the session acts with, who that
/// token is (from the API), and the calls the page makes with it.
struct ConsoleVisit: Sendable {
    let request: Request
    let context: GatewayRequestContext
    let api: AdminAPI
    let token: AdminTokenSecret
    /// Echoed in every form; a post without it is refused.
    let csrfToken: String
    /// Who the token is (`GET /admin/v1/me`).
    let me: Me

    struct Me: Sendable {
        let id: String
        let name: String
        let scope: String
    }

    var isOperator: Bool { me.scope == "operator" }

    /// The one app an app-scoped token covers; `nil` for operators.
    var scopedAppID: String? {
        guard me.scope.hasPrefix("app:") else { return nil }
        return String(me.scope.dropFirst(4))
    }

    /// A path parameter of the page, percent-decoded.
    func parameter(_ name: String) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    /// Calls the admin API with the session's token.
    func call(
        _ method: HTTPRequest.Method, _ path: String, json: [String: JSONValue]? = nil, query: [(String, String?)] = []
    ) async -> APIAnswer {
        var body: ByteBuffer?
        if let json, let data = try? JSONEncoder().encode(json) {
            body = ByteBuffer(bytes: data)
        }
        let response = await api.call(method, Self.pathAndQuery(path, query), token: token, body: body, from: context)
        return await APIAnswer.read(response)
    }

    /// Calls the admin API with a body of another type (an NDJSON import).
    func call(_ method: HTTPRequest.Method, _ path: String, body: String, contentType: String) async -> APIAnswer {
        let response = await api.call(
            method, path, token: token, body: ByteBuffer(string: body), contentType: contentType, from: context)
        return await APIAnswer.read(response)
    }

    /// The API's answer itself, for a download (an NDJSON export).
    func stream(_ path: String, query: [(String, String?)], accept: String) async -> Response {
        await api.call(.get, Self.pathAndQuery(path, query), token: token, accept: accept, from: context)
    }

    static func pathAndQuery(_ path: String, _ query: [(String, String?)]) -> String {
        let pairs = query.compactMap { name, value in value.map { "\(name)=\(ConsolePaths.escapeQuery($0))" } }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }
}
