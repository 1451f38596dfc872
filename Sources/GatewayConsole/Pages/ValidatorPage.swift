import Foundation
import GatewayConsoleKit
import GatewayCore
import HTTPTypes
import Hummingbird

/// The token validator (Layer's dashboard tool, for this gateway's apps):
/// paste an identity token, see its header and claims and every problem
/// `POST /v1/identity_tokens/validate` reports. The pasted token is not
/// shown back.
struct ValidatorPage: Sendable {
    let pages: PageRenderer

    /// Longer than any token this gateway mints; the API has its own limit.
    static let largestToken = 16 * 1024

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("validator") { visit in pages.page("validator", title: "Token validator", visit: visit) }
        routes.post("validator") { visit, form in
            let token = form.text("identity_token") ?? ""
            // The app and profile typed are shown again; the token never is.
            let typed: [String: Any] = ["form": ["app_id": form.text("app_id") ?? "", "token_profile": form.text("token_profile") ?? ""]]
            guard !token.isEmpty, token.utf8.count <= Self.largestToken else {
                return pages.page(
                    "validator", title: "Token validator", visit: visit,
                    data: FormErrors.local("identity_token", "Paste an identity token (at most 16 KiB).").merging(typed) { $1 },
                    status: .badRequest)
            }
            var body: [String: JSONValue] = ["identity_token": .string(token)]
            for field in ["app_id", "token_profile"] {
                if let value = form.text(field)?.trimmingCharacters(in: .whitespaces), !value.isEmpty { body[field] = .string(value) }
            }
            let answer = await visit.call(.post, "/v1/identity_tokens/validate", json: body)
            guard answer.succeeded else {
                return pages.page(
                    "validator", title: "Token validator", visit: visit,
                    data: FormErrors.place(answer.errorMessage, fields: ["identity_token", "app_id", "token_profile"]).merging(typed) { $1 },
                    status: answer.status)
            }
            let report = try answer.read(TokenValidationAnswer.self, visit, pages)
            var result: [String: Any] = [
                "valid": report.valid,
                "header": JSONText.pretty(report.header),
                "claims": JSONText.pretty(report.claims),
                "problems": report.problems.map { ["code": $0.code, "message": $0.message] },
                "has_problems": !report.problems.isEmpty,
            ]
            if let appID = report.appID {
                result["app_id"] = appID
                result["app_href"] = ConsolePaths.app(appID)
            }
            return pages.page("validator", title: "Token validator", visit: visit, data: typed.merging(["result": result]) { $1 })
        }
    }
}
