import Foundation
import GatewayCore
import HTTPTypes
public import GatewayConsoleKit
import Hummingbird

/// An app's passkeys: one user's (looked up by user id) listed, renamed and
/// revoked, and the association files the RP domain serves.
struct PasskeyPages: Sendable {
    let pages: PageRenderer

    static let notices = ["renamed": "Passkey renamed.", "revoked": "Passkey revoked: it signs nobody in from now on."]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/passkeys") { visit in try await page(visit, errors: [:]) }
        routes.post("apps/{app_id}/passkeys/rename") { visit, form in
            try await change(visit, form, method: .patch, body: ["name": .string(form["name"] ?? "")], notice: "renamed")
        }
        routes.post("apps/{app_id}/passkeys/revoke") { visit, form in
            try await change(visit, form, method: .delete, body: nil, notice: "revoked")
        }
    }

    private static func base(_ appID: String) -> String { "\(ConsolePaths.app(appID))/passkeys" }

    private static func apiPath(_ appID: String, _ userID: String) -> String {
        "\(ConsolePaths.adminApp(appID))/users/\(ConsolePaths.segment(userID))/passkeys"
    }

    private func change(
        _ visit: ConsoleVisit, _ form: FormInput, method: HTTPRequest.Method, body: [String: JSONValue]?, notice: String
    ) async throws -> Response {
        let appID = visit.parameter("app_id")
        let userID = form["user_id"] ?? ""
        let path = "\(Self.apiPath(appID, userID))/\(ConsolePaths.segment(form["credential_id"] ?? ""))"
        let answer = await visit.call(method, path, json: body)
        guard answer.succeeded else {
            return try await page(visit, userID: userID, errors: ["error": answer.errorMessage], status: answer.status)
        }
        return PageRenderer.redirect(ConsoleVisit.pathAndQuery(Self.base(appID), [("user_id", userID), ("notice", notice)]))
    }

    private func page(
        _ visit: ConsoleVisit, userID: String? = nil, errors: [String: Any], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let appID = visit.parameter("app_id")
        let header = try await AppHeader.load(appID, visit, pages)
        let query = visit.request.uri.queryParameters
        let userID = userID ?? query["user_id"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        var data = header.values(current: "passkeys").merging(errors) { $1 }
        data["passkeys_base"] = Self.base(appID)
        data["user_id"] = userID ?? ""
        if let userID {
            let answer = await visit.call(.get, Self.apiPath(appID, userID))
            let passkeys = try answer.read(PasskeyListAnswer.self, visit, pages).passkeys
            data["looked_up"] = true
            data["passkeys"] = passkeys.map(\.templateValues)
            data["none"] = passkeys.isEmpty
        }
        let association = await visit.call(.get, "\(ConsolePaths.adminApp(appID))/passkeys/association")
        if association.succeeded {
            data["association"] = String(decoding: JSONCoding.bytes(of: association.json, indented: true), as: UTF8.self)
        }
        data["notice"] = query["notice"].flatMap { Self.notices[String($0)] }
        return pages.page("passkeys", title: "Passkeys", visit: visit, data: data, status: status)
    }
}

/// A user's passkeys as the admin API answers them (openapi.yaml, `Passkey`).
struct PasskeyListAnswer: Decodable, Sendable {
    let passkeys: [PasskeyAnswer]
}

extension PasskeyAnswer {
    var templateValues: [String: Any] {
        [
            "credential_id": credential_id, "name": name, "created_at": created_at, "last_used_at": last_used_at ?? "never",
            "kind": backup_eligible ? (backed_up ? "synced" : "syncable, not backed up") : "this device only",
            "attestation_format": attestation_format,
        ]
    }
}

extension PasskeyPlugin: ConsolePageProvider {
    public var consoleTab: ConsoleTab { ConsoleTab(label: "Passkeys", path: "passkeys", credentialType: credentialType) }
    public var consoleTemplates: [(name: String, text: String)] { embeddedConsoleAssets }

    public func addConsolePages(to routes: ConsoleRoutes) {
        PasskeyPages(pages: routes.pages).addRoutes(routes)
    }
}
