import Foundation
import GatewayConsoleKit
import GatewayCore
import HTTPTypes
import Hummingbird

/// The apps list (search, paging, create) and an app's settings page
/// (edit, turn off or on, delete).
struct AppPages: Sendable {
    let pages: PageRenderer
    let credentialTypes: [String]
    let optionPages: OptionPages

    static let pageSize = 20
    static let notices = [
        "created": "App created. Generate a key next: an app without an active key cannot sign tokens.",
        "saved": "Settings saved.",
        "deleted": "App deleted.",
    ]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps") { visit in try await list(visit, form: nil, errors: [:]) }
        routes.post("apps") { visit, form in try await create(visit, form) }
        routes.get("apps/{app_id}") { visit in
            try await settings(visit, appID: visit.parameter("app_id"), form: nil, errors: [:])
        }
        routes.post("apps/{app_id}/settings") { visit, form in
            try await save(visit, appID: visit.parameter("app_id"), form)
        }
        routes.post("apps/{app_id}/enabled") { visit, form in
            let appID = visit.parameter("app_id")
            let answer = await visit.call(.patch, ConsolePaths.adminApp(appID), json: ["enabled": .bool(form["enabled"] == "true")])
            guard answer.succeeded else {
                return try await settings(visit, appID: appID, form: nil, errors: ["error": answer.errorMessage], status: answer.status)
            }
            return PageRenderer.redirect("\(ConsolePaths.app(appID))?notice=saved")
        }
        routes.post("apps/{app_id}/delete") { visit, _ in
            let appID = visit.parameter("app_id")
            let answer = await visit.call(.delete, ConsolePaths.adminApp(appID))
            guard answer.succeeded else {
                return try await settings(visit, appID: appID, form: nil, errors: ["error": answer.errorMessage], status: answer.status)
            }
            return PageRenderer.redirect("\(ConsolePaths.root)/apps?notice=deleted")
        }
    }

    private func list(_ visit: ConsoleVisit, form: FormInput?, errors: [String: Any], status: HTTPResponse.Status = .ok)
        async throws -> Response
    {
        if let appID = visit.scopedAppID { return PageRenderer.redirect(ConsolePaths.app(appID)) }
        let query = visit.request.uri.queryParameters
        let search = query["search"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        let answer = await visit.call(
            .get, "/admin/v1/apps",
            query: [("limit", "\(Self.pageSize)"), ("search", search), ("cursor", query["cursor"].map(String.init))])
        let list = try answer.read(ListAnswer<AppAnswer>.self, visit, pages)
        let apps = list.items.map { app -> [String: Any] in
            var values = app.templateValues
            values["href"] = ConsolePaths.app(app.appID)
            values["types"] = app.credentialTypes.joined(separator: ", ")
            return values
        }
        var data: [String: Any] = errors
        data["apps"] = apps
        data["none"] = apps.isEmpty
        data["search"] = search ?? ""
        data["searched"] = search != nil
        if let next = list.nextCursor {
            data["next_href"] = ConsoleVisit.pathAndQuery("\(ConsolePaths.root)/apps", [("search", search), ("cursor", next)])
        }
        data["notice"] = query["notice"].flatMap { Self.notices[String($0)] }
        data["types"] = credentialTypes.map { type in ["type": type, "checked": form?.all("credential_types").contains(type) ?? false] }
        data["new"] = [
            "name": form?["name"] ?? "",
            "provider_id": form?["provider_id"] ?? "",
            "production": form?["environment"] == "production",
        ]
        return pages.page("apps", title: "Apps", visit: visit, data: data, status: status)
    }

    private func create(_ visit: ConsoleVisit, _ form: FormInput) async throws -> Response {
        let appID = UUID().uuidString.lowercased()
        let body: [String: JSONValue] = [
            "app_id": .string(appID),
            "name": .string(form["name"] ?? ""),
            "environment": .string(form["environment"] ?? "development"),
            // Layer's provider id for the app; a development app may start with a made-up one.
            "provider_id": .string(form.text("provider_id") ?? UUID().uuidString.lowercased()),
            "credential_types": .array(form.all("credential_types").map(JSONValue.string)),
        ]
        let answer = await visit.call(.post, "/admin/v1/apps", json: body)
        if !answer.succeeded && visit.scopedAppID != nil { return pages.apiFailure(answer, visit: visit) }
        guard answer.succeeded else {
            return try await list(
                visit, form: form, errors: FormErrors.place(answer.errorMessage, fields: ["name", "environment", "provider_id", "credential_types"]),
                status: answer.status)
        }
        return PageRenderer.redirect("\(ConsolePaths.app(appID))?notice=created")
    }

    private func settings(_ visit: ConsoleVisit, appID: String, form: FormInput?, errors: [String: Any],
                          status: HTTPResponse.Status = .ok) async throws -> Response {
        let header = try await AppHeader.load(appID, visit, pages)
        var data = header.values(current: "settings").merging(errors) { $1 }
        let app = header.app
        let chosen = form.map { $0.all("credential_types") } ?? header.types
        data["form"] = [
            "name": form?["name"] ?? app.name,
            "ttl": form?["token_ttl_seconds"] ?? "\(app.tokenTTLSeconds)",
            "production": (form?["environment"] ?? app.environment) == "production",
        ]
        data["types"] = Set(credentialTypes + header.types).sorted().map { ["type": $0, "checked": chosen.contains($0)] }
        data["setting_pages"] = optionPages.settingLinks(appID: appID, app: app)
        data["option_pages"] = optionPages.pluginLinks(appID: appID, types: credentialTypes).map { link in
            link.merging(["used": header.types.contains(link["type"] as? String ?? "")]) { $1 }
        }
        data["enabled"] = app.enabled
        data["jwks_href"] = "/v1/apps/\(ConsolePaths.segment(appID))/jwks.json"
        data["notice"] = visit.request.uri.queryParameters["notice"].flatMap { Self.notices[String($0)] }
        return pages.page("app", title: app.name, visit: visit, data: data, status: status)
    }

    /// A PATCH of the app's name, lifetime, environment and credential
    /// types. Plugin options, token profiles, rate limits and the settings
    /// that `null` turns off have their own typed pages (``OptionPages``).
    private func save(_ visit: ConsoleVisit, appID: String, _ form: FormInput) async throws -> Response {
        var body: [String: JSONValue] = [
            "name": .string(form["name"] ?? ""),
            "environment": .string(form["environment"] ?? "development"),
            "credential_types": .array(form.all("credential_types").map(JSONValue.string)),
        ]
        guard let ttl = Int(form["token_ttl_seconds"]?.trimmingCharacters(in: .whitespaces) ?? "") else {
            return try await settings(
                visit, appID: appID, form: form, errors: FormErrors.local("token_ttl_seconds", "Enter a whole number of seconds."),
                status: .badRequest)
        }
        body["token_ttl_seconds"] = .number(Double(ttl))
        let answer = await visit.call(.patch, ConsolePaths.adminApp(appID), json: body)
        guard answer.succeeded else {
            return try await settings(
                visit, appID: appID, form: form,
                errors: FormErrors.place(
                    answer.errorMessage,
                    fields: [
                        "name", "environment", "provider_id", "token_ttl_seconds", "credential_types",
                    ]),
                status: answer.status)
        }
        return PageRenderer.redirect("\(ConsolePaths.app(appID))?notice=saved")
    }
}
