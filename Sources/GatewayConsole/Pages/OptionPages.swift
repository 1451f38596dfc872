import Foundation
import GatewayConsoleKit
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import HTTPTypes
import Hummingbird

/// One page per declared set of options (``OptionSchema``): each plugin's
/// options and the app's own settings that are one object (`sessions`,
/// `mfa`, `self_service`), as a typed form (``OptionForm``) saved as a
/// `PATCH` of the app. No page's form is written by hand.
struct OptionPages: Sendable {
    /// What one page edits.
    struct Subject: Sendable {
        enum Place: Sendable {
            /// `plugins.<type>`; saving adds the type to the credential types.
            case plugin(String)
            /// A member of the app's settings that `null` turns off.
            case setting(String)
            /// A member of the app's settings that is a list or a map
            /// (`token_profiles`, `rate_limits`): the form's one field.
            case member(String, empty: JSONValue)
        }

        let slug: String
        let title: String
        let schema: OptionSchema
        let place: Place

        var apiPath: String {
            switch place {
            case .plugin(let type): "plugins.\(type)"
            case .setting(let member): member
            case .member: ""
            }
        }
    }

    let pages: PageRenderer
    let subjects: [String: Subject]

    static let profilesSlug = "token_profiles"
    static let rateLimitsSlug = "rate_limits"

    init(pages: PageRenderer, plugins: [(type: String, schema: OptionSchema)], profiles: OptionShape) {
        self.pages = pages
        var subjects: [String: Subject] = [:]
        for plugin in plugins {
            subjects[plugin.type] = Subject(slug: plugin.type, title: "\(plugin.type) options", schema: plugin.schema, place: .plugin(plugin.type))
        }
        for setting in AppSettingSchemas.all {
            subjects[setting.member] = Subject(slug: setting.member, title: setting.title, schema: setting.schema, place: .setting(setting.member))
        }
        subjects[Self.profilesSlug] = Subject(
            slug: Self.profilesSlug, title: "Token profiles",
            schema: OptionSchema(
                name: "TokenProfiles",
                description:
                    "The tokens the app issues, the first for requests that name none. Secrets are write-only: left empty, each keeps the stored one of its profile.",
                fields: [OptionField(Self.profilesSlug, profiles, required: true)]),
            place: .member(Self.profilesSlug, empty: .array([])))
        subjects[Self.rateLimitsSlug] = Subject(
            slug: Self.rateLimitsSlug, title: "Rate limits",
            schema: OptionSchema(
                name: "RateLimitOverrides",
                description:
                    "This app's own numbers per policy (ip, app, user_failures, refresh_failures, mfa_failures, phone_failures, code_sends_number, code_sends_ip, passkey_challenges); a policy without a row keeps the deployment's. An app's admin may only add tighter ones; an operator's are the operator's.",
                fields: [OptionField(Self.rateLimitsSlug, AppSettingSchemas.rateLimits)]),
            place: .member(Self.rateLimitsSlug, empty: .object([:])))
        self.subjects = subjects
    }

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/options/{subject}") { visit in
            try await page(visit, appID: visit.parameter("app_id"), slug: visit.parameter("subject"), typed: nil, error: nil)
        }
        routes.post("apps/{app_id}/options/{subject}") { visit, form in
            try await save(visit, appID: visit.parameter("app_id"), slug: visit.parameter("subject"), form)
        }
    }

    /// The links to the option pages of the declared plugins `types` name.
    func pluginLinks(appID: String, types: [String]) -> [[String: Any]] {
        types.filter { subjects[$0] != nil }.map { ["type": $0, "href": href(appID, $0)] }
    }

    /// The links to the pages of the app's own settings, with whether each is on (token profiles always are).
    func settingLinks(appID: String, app: AppAnswer) -> [[String: Any]] {
        AppSettingSchemas.all.map { setting in
            ["title": setting.title, "href": href(appID, setting.member), "on": app.setting(setting.member) != nil, "switchable": true]
        } + [
            ["title": "Token profiles", "href": href(appID, Self.profilesSlug), "on": true, "switchable": false],
            ["title": "Rate limits", "href": href(appID, Self.rateLimitsSlug), "on": true, "switchable": false],
        ]
    }

    private func href(_ appID: String, _ slug: String) -> String {
        "\(ConsolePaths.app(appID))/options/\(ConsolePaths.segment(slug))"
    }

    private func subject(_ slug: String, _ visit: ConsoleVisit) throws(PageAnswer) -> Subject {
        guard let subject = subjects[slug] else {
            throw PageAnswer(
                pages.page("message", title: "Not found", visit: visit, data: ["message": "No options '\(slug)' here."], status: .notFound))
        }
        return subject
    }

    private func stored(_ subject: Subject, in app: AppAnswer) -> JSONValue? {
        switch subject.place {
        case .plugin(let type): app.plugins[type]
        case .setting(let member): app.setting(member)
        case .member(let member, _): .object([member: app.member(member)])
        }
    }

    /// `typed` is what a refused form held (nil: the stored options), and
    /// `on` whether its switch was on (nil: as stored).
    private func page(
        _ visit: ConsoleVisit, appID: String, slug: String, typed: JSONValue?, on: Bool? = nil, error: String?,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let subject = try subject(slug, visit)
        let optionForm = OptionForm(schema: subject.schema, apiPath: subject.apiPath, isOperator: visit.isOperator)
        let header = try await AppHeader.load(appID, visit, pages)
        let stored = stored(subject, in: header.app)
        var data = header.values(current: "settings")
        let (fields, unplaced) = optionForm.fields(values: typed ?? stored ?? .object([:]), error: error)
        data["fields"] = fields
        data["slug"] = slug
        data["title"] = subject.title
        data["help"] = subject.schema.description ?? ""
        data["has_help"] = subject.schema.description != nil
        data["switchable"] = subject.schema.nullTurnsOff
        data["on"] = on ?? (stored != nil)
        data["error"] = unplaced
        data["notice"] = visit.request.uri.queryParameters["notice"] == "saved" ? "Options saved." : nil
        return pages.page("options", title: subject.title, visit: visit, data: data, status: status)
    }

    /// The app's plugins as stored (secrets as the marker, which keeps them)
    /// with this plugin's options as the form holds them; or the setting as
    /// the form holds it, `null` when its switch is off.
    private func save(_ visit: ConsoleVisit, appID: String, slug: String, _ form: FormInput) async throws -> Response {
        let subject = try subject(slug, visit)
        let optionForm = OptionForm(schema: subject.schema, apiPath: subject.apiPath, isOperator: visit.isOperator)
        let app = try await AppHeader.load(appID, visit, pages).app
        let options = optionForm.options(from: form, stored: stored(subject, in: app) ?? .null)
        let on = !subject.schema.nullTurnsOff || form["on"] == "true"
        var body: [String: JSONValue] = [:]
        switch subject.place {
        case .plugin(let type):
            var plugins = app.plugins
            plugins[type] = options
            body["plugins"] = .object(plugins)
            if !app.credentialTypes.contains(type) {
                body["credential_types"] = .array((app.credentialTypes + [type]).map(JSONValue.string))
            }
        case .setting(let member):
            body[member] = on ? options : .null
        case .member(let member, let empty):
            body[member] = options[member] ?? empty
        }
        let answer = await visit.call(.patch, ConsolePaths.adminApp(appID), json: body)
        guard answer.succeeded else {
            // What was typed again, every secret left out: a refused page never shows one.
            let typed = subject.schema.mapSecrets(options) { _, _ in RedactedSecret.marker }
            return try await page(
                visit, appID: appID, slug: slug, typed: typed, on: on, error: answer.errorMessage, status: answer.status)
        }
        return PageRenderer.redirect("\(href(appID, slug))?notice=saved")
    }
}
