import Foundation
import GatewayConsoleKit
import GatewayCore
import GatewayPluginKit
import HTTPTypes
import Hummingbird

/// One page per plugin whose options are declared (``OptionSchema``): the
/// options as a typed form (``OptionForm``), saved as a `PATCH` of the app's
/// `plugins`. No plugin's form is written by hand.
struct PluginOptionPages: Sendable {
    let pages: PageRenderer
    /// Each declared plugin's options, by credential type.
    let schemas: [String: OptionSchema]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/options/{type}") { visit in
            try await page(visit, appID: visit.parameter("app_id"), type: visit.parameter("type"), typed: nil, error: nil)
        }
        routes.post("apps/{app_id}/options/{type}") { visit, form in
            try await save(visit, appID: visit.parameter("app_id"), type: visit.parameter("type"), form)
        }
    }

    /// The links to the option pages of the declared plugins `types` name.
    func links(appID: String, types: [String]) -> [[String: Any]] {
        types.filter { schemas[$0] != nil }.map { ["type": $0, "href": "\(ConsolePaths.app(appID))/options/\(ConsolePaths.segment($0))"] }
    }

    private func form(_ type: String, _ visit: ConsoleVisit) throws(PageAnswer) -> OptionForm {
        guard let schema = schemas[type] else {
            throw PageAnswer(
                pages.page("message", title: "Not found", visit: visit, data: ["message": "No plugin '\(type)' with options here."],
                           status: .notFound))
        }
        return OptionForm(schema: schema, apiPath: "plugins.\(type)", isOperator: visit.isOperator)
    }

    private func page(
        _ visit: ConsoleVisit, appID: String, type: String, typed: JSONValue?, error: String?, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let optionForm = try form(type, visit)
        let header = try await AppHeader.load(appID, visit, pages)
        var data = header.values(current: "settings")
        let (fields, unplaced) = optionForm.fields(values: typed ?? header.app.plugins[type] ?? .object([:]), error: error)
        data["fields"] = fields
        data["type"] = type
        data["help"] = optionForm.schema.description ?? ""
        data["has_help"] = optionForm.schema.description != nil
        data["error"] = unplaced
        data["notice"] = visit.request.uri.queryParameters["notice"] == "saved" ? "Options saved." : nil
        return pages.page("plugin_options", title: "\(type) options", visit: visit, data: data, status: status)
    }

    /// The app's plugins as stored (secrets as the marker, which keeps them)
    /// with this plugin's options as the form holds them.
    private func save(_ visit: ConsoleVisit, appID: String, type: String, _ form: FormInput) async throws -> Response {
        let optionForm = try self.form(type, visit)
        let app = try await AppHeader.load(appID, visit, pages).app
        let options = optionForm.options(from: form, stored: app.plugins[type] ?? .null)
        var plugins = app.plugins
        plugins[type] = options
        var body: [String: JSONValue] = ["plugins": .object(plugins)]
        if !app.credentialTypes.contains(type) {
            body["credential_types"] = .array((app.credentialTypes + [type]).map(JSONValue.string))
        }
        let answer = await visit.call(.patch, ConsolePaths.adminApp(appID), json: body)
        guard answer.succeeded else {
            // What was typed again, every secret left out: a refused page never shows one.
            let typed = optionForm.schema.mapSecrets(options) { _, _ in RedactedSecret.marker }
            return try await page(visit, appID: appID, type: type, typed: typed, error: answer.errorMessage, status: answer.status)
        }
        return PageRenderer.redirect("\(ConsolePaths.app(appID))/options/\(ConsolePaths.segment(type))?notice=saved")
    }
}
