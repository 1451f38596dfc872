import Foundation
import GatewayConsoleKit
import GatewayCore
import HTTPTypes
import Hummingbird

/// Admin tokens (operators): list, create (the secret is shown on the page
/// that creates it, once), revoke. A revoked token's console sessions end
/// at their next page.
struct AdminTokenPages: Sendable {
    let pages: PageRenderer

    static let pageSize = 50
    static let notices = ["revoked": "Token revoked: it stops working at once, in the console too."]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("admin-tokens") { visit in try await list(visit, form: nil, errors: [:]) }
        routes.post("admin-tokens") { visit, form in
            var body: [String: JSONValue] = [
                "name": .string(form["name"] ?? ""),
                "scope": .string(form["scope"] == "app" ? "app:\(ConsolePaths.bare(form["app_id"] ?? ""))" : "operator"),
            ]
            if let expires = form.text("expires_at") { body["expires_at"] = .string(AuditPages.utcTime(expires)) }
            let answer = await visit.call(.post, "/admin/v1/admin_tokens", json: body)
            guard answer.succeeded else {
                return try await list(
                    visit, form: form,
                    errors: FormErrors.place(answer.errorMessage, fields: ["name", "scope", "expires_at"]), status: answer.status)
            }
            let created = try answer.read(AdminTokenAnswer.self, visit, pages)
            return try await list(visit, form: nil, errors: [:], created: created)
        }
        routes.post("admin-tokens/{token_id}/revoke") { visit, _ in
            let answer = await visit.call(.delete, "/admin/v1/admin_tokens/\(ConsolePaths.segment(visit.parameter("token_id")))")
            guard answer.succeeded else { return try await list(visit, form: nil, errors: ["error": answer.errorMessage], status: answer.status) }
            return PageRenderer.redirect("\(ConsolePaths.root)/admin-tokens?notice=revoked")
        }
    }

    private func list(
        _ visit: ConsoleVisit, form: FormInput?, errors: [String: Any], created: AdminTokenAnswer? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let query = visit.request.uri.queryParameters
        let answer = await visit.call(
            .get, "/admin/v1/admin_tokens", query: [("limit", "\(Self.pageSize)"), ("cursor", query["cursor"].map(String.init))])
        let list = try answer.read(ListAnswer<AdminTokenAnswer>.self, visit, pages)
        let tokens = list.items.map { token -> [String: Any] in
            var values = token.templateValues
            values["live"] = token.revokedAt == nil
            values["mine"] = token.id == visit.me.id
            values["revoke_action"] = "\(ConsolePaths.root)/admin-tokens/\(ConsolePaths.segment(token.id))/revoke"
            return values
        }
        var data = errors
        data["tokens"] = tokens
        if let next = list.nextCursor {
            data["next_href"] = ConsoleVisit.pathAndQuery("\(ConsolePaths.root)/admin-tokens", [("cursor", next)])
        }
        if let created { data["created"] = created.templateValues }
        data["new"] = [
            "name": form?["name"] ?? "", "app_id": form?["app_id"] ?? "", "app_scope": form?["scope"] == "app",
            "expires_at": form?["expires_at"] ?? "",
        ]
        data["notice"] = query["notice"].flatMap { Self.notices[String($0)] }
        return pages.page("admin_tokens", title: "Admin tokens", visit: visit, data: data, status: status)
    }
}
