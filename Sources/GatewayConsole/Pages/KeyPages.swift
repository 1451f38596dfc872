import Foundation
import GatewayConsoleKit
import GatewayCore
import HTTPTypes
import Hummingbird

/// An app's signing keys: their states, generate, import a PEM, activate,
/// delete, and the app's JWKS link. Private keys never come back: the API
/// answers with public parts only.
struct KeyPages: Sendable {
    let pages: PageRenderer

    static let notices = [
        "generated": "Key generated.", "imported": "Key imported.", "activated": "Key activated: it signs new tokens now.",
        "deleted": "Key deleted.",
    ]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/keys") { visit in try await list(visit, errors: [:]) }
        routes.post("apps/{app_id}/keys/generate") { visit, form in
            let bits = Int(form["bits"] ?? "") ?? 2048
            return try await change(
                visit, .post, "keys", json: ["generate": .object(["bits": .number(Double(bits))])], notice: "generated",
                fields: ["bits"])
        }
        routes.post("apps/{app_id}/keys/import") { visit, form in
            var body: [String: JSONValue] = ["private_key_pem": .string(form["private_key_pem"] ?? "")]
            if let keyID = form.text("key_id") { body["key_id"] = .string(keyID) }
            return try await change(visit, .post, "keys", json: body, notice: "imported", fields: ["key_id", "private_key_pem"])
        }
        routes.post("apps/{app_id}/keys/{key_id}/activate") { visit, _ in
            try await change(visit, .post, "keys/\(ConsolePaths.segment(visit.parameter("key_id")))/activate", notice: "activated")
        }
        routes.post("apps/{app_id}/keys/{key_id}/delete") { visit, _ in
            try await change(visit, .delete, "keys/\(ConsolePaths.segment(visit.parameter("key_id")))", notice: "deleted")
        }
    }

    private func change(
        _ visit: ConsoleVisit, _ method: HTTPRequest.Method, _ path: String, json: [String: JSONValue]? = nil,
        notice: String, fields: [String] = []
    ) async throws -> Response {
        let appID = visit.parameter("app_id")
        let answer = await visit.call(method, "\(ConsolePaths.adminApp(appID))/\(path)", json: json)
        guard answer.succeeded else {
            return try await list(visit, errors: FormErrors.place(answer.errorMessage, fields: fields), status: answer.status)
        }
        return PageRenderer.redirect("\(ConsolePaths.app(appID))/keys?notice=\(notice)")
    }

    private func list(_ visit: ConsoleVisit, errors: [String: Any], status: HTTPResponse.Status = .ok) async throws -> Response {
        let appID = visit.parameter("app_id")
        let header = try await AppHeader.load(appID, visit, pages)
        let answer = await visit.call(.get, "\(ConsolePaths.adminApp(appID))/keys")
        let list = try answer.read(ListAnswer<KeyAnswer>.self, visit, pages)
        let base = "\(ConsolePaths.app(appID))/keys"
        let keys = list.items.map { key -> [String: Any] in
            var values = key.templateValues
            values["action_base"] = "\(base)/\(ConsolePaths.segment(key.keyID))"
            values["is_active"] = key.isActive
            values["can_activate"] = !key.isActive
            return values
        }
        var data = header.values(current: "keys").merging(errors) { $1 }
        data["keys"] = keys
        data["none"] = keys.isEmpty
        data["keys_base"] = base
        data["jwks_href"] = "/v1/apps/\(ConsolePaths.segment(appID))/jwks.json"
        data["notice"] = visit.request.uri.queryParameters["notice"].flatMap { Self.notices[String($0)] }
        return pages.page("keys", title: "Keys", visit: visit, data: data, status: status)
    }
}
