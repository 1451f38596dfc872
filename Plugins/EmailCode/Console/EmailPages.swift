import Foundation
import GatewayCore
public import GatewayConsoleKit
import HTTPTypes
import Hummingbird

/// An app's code email before any user gets one: its preview for a locale
/// (`email_code:preview`) and a test message queued to an address
/// (`email_code:test_message`). The options themselves are edited on the
/// "email_code options" page.
struct EmailPages: Sendable {
    let pages: PageRenderer

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/email") { visit in try await page(visit, preview: nil, form: nil, errors: [:]) }
        routes.post("apps/{app_id}/email/preview") { visit, form in
            let answer = await visit.call(.post, Self.apiPath(visit.parameter("app_id"), "preview"), json: Self.body(form, ["locale"]))
            guard answer.succeeded else {
                return try await page(visit, preview: nil, form: form, errors: FormErrors.place(answer.errorMessage, fields: ["locale"]), status: answer.status)
            }
            return try await page(visit, preview: try answer.read(EmailPreviewAnswer.self, visit, pages), form: form, errors: [:])
        }
        routes.post("apps/{app_id}/email/test") { visit, form in
            let appID = visit.parameter("app_id")
            let answer = await visit.call(.post, Self.apiPath(appID, "test_message"), json: Self.body(form, ["to", "locale"]))
            guard answer.succeeded else {
                return try await page(visit, preview: nil, form: form, errors: FormErrors.place(answer.errorMessage, fields: ["to", "locale"]), status: answer.status)
            }
            return PageRenderer.redirect("\(ConsolePaths.app(appID))/email?notice=queued")
        }
    }

    static func apiPath(_ appID: String, _ action: String) -> String { "\(ConsolePaths.adminApp(appID))/email_code:\(action)" }

    /// The named fields that were filled in, as the API's JSON body.
    static func body(_ form: FormInput, _ names: [String]) -> [String: JSONValue] {
        var body: [String: JSONValue] = [:]
        for name in names { if let value = form.text(name) { body[name] = .string(value) } }
        return body
    }

    private func page(
        _ visit: ConsoleVisit, preview: EmailPreviewAnswer?, form: FormInput?, errors: [String: Any], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let appID = visit.parameter("app_id")
        let header = try await AppHeader.load(appID, visit, pages)
        var data = header.values(current: "email").merging(errors) { $1 }
        data["email_base"] = "\(ConsolePaths.app(appID))/email"
        data["form"] = ["locale": form?["locale"] ?? "", "to": form?["to"] ?? ""]
        if let preview {
            data["preview"] = [
                "locale": preview.locale, "from": preview.from, "subject": preview.subject, "text": preview.text, "html": preview.html,
            ]
        }
        data["notice"] = visit.request.uri.queryParameters["notice"] == "queued" ? "Test message queued: watch the audit page for its delivery." : nil
        return pages.page("email", title: "Email", visit: visit, data: data, status: status)
    }
}

/// `email_code:preview`'s answer.
struct EmailPreviewAnswer: Decodable, Sendable {
    let locale: String
    let from: String
    let subject: String
    let text: String
    let html: String
}

extension EmailCodePlugin: ConsolePageProvider {
    public var consoleTab: ConsoleTab { ConsoleTab(label: "Email", path: "email", credentialType: credentialType) }
    public var consoleTemplates: [(name: String, text: String)] { embeddedConsoleAssets }

    public func addConsolePages(to routes: ConsoleRoutes) {
        EmailPages(pages: routes.pages).addRoutes(routes)
    }
}
