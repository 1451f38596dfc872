import Foundation
import GatewayCore
import HTTPTypes
public import GatewayConsoleKit
import Hummingbird

/// An app's phone numbers: bindings (bind, unbind), the test numbers its
/// phone-code options set (edited with the other plugin options, on the
/// settings page), and a banner for each open pumping breaker, which an
/// operator may release here.
struct PhoneNumberPages: Sendable {
    let pages: PageRenderer

    static let pageSize = 25
    static let notices = ["bound": "Number bound.", "unbound": "Number unbound.", "released": "Breaker released."]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/phone-numbers") { visit in try await list(visit, form: nil, errors: [:]) }
        routes.post("apps/{app_id}/phone-numbers") { visit, form in try await bind(visit, form) }
        routes.post("apps/{app_id}/phone-numbers/{number}/unbind") { visit, _ in
            let appID = visit.parameter("app_id")
            let answer = await visit.call(.delete, Self.apiPath(appID, visit.parameter("number")))
            guard answer.succeeded else { return try await list(visit, form: nil, errors: ["error": answer.errorMessage], status: answer.status) }
            return PageRenderer.redirect("\(ConsolePaths.app(appID))/phone-numbers?notice=unbound")
        }
        routes.post("apps/{app_id}/phone-numbers/breakers/{prefix}/release") { visit, _ in
            let appID = visit.parameter("app_id")
            let path = "\(ConsolePaths.adminApp(appID))/send_breakers/sms/\(ConsolePaths.segment(visit.parameter("prefix")))"
            let answer = await visit.call(.delete, path)
            guard answer.succeeded else { return try await list(visit, form: nil, errors: ["error": answer.errorMessage], status: answer.status) }
            return PageRenderer.redirect("\(ConsolePaths.app(appID))/phone-numbers?notice=released")
        }
    }

    static func apiPath(_ appID: String, _ number: String) -> String {
        "\(ConsolePaths.adminApp(appID))/phone_numbers/\(ConsolePaths.segment(number))"
    }

    private func bind(_ visit: ConsoleVisit, _ form: FormInput) async throws -> Response {
        let appID = visit.parameter("app_id")
        guard let number = form.text("phone_number") else {
            return try await list(visit, form: form, errors: FormErrors.local("phone_number", "Enter a number in E.164 form, e.g. +14155550123."), status: .badRequest)
        }
        var body: [String: JSONValue] = ["user_id": .string(form["user_id"] ?? "")]
        for field in UserProfile.fieldNames { if let value = form.text(field) { body[field] = .string(value) } }
        let answer = await visit.call(.put, Self.apiPath(appID, number), json: body)
        guard answer.succeeded else {
            return try await list(
                visit, form: form, errors: FormErrors.place(answer.errorMessage, fields: ["phone_number", "user_id"] + UserProfile.fieldNames),
                status: answer.status)
        }
        return PageRenderer.redirect("\(ConsolePaths.app(appID))/phone-numbers?notice=bound")
    }

    private func list(_ visit: ConsoleVisit, form: FormInput?, errors: [String: Any], status: HTTPResponse.Status = .ok)
        async throws -> Response
    {
        let appID = visit.parameter("app_id")
        let header = try await AppHeader.load(appID, visit, pages)
        let query = visit.request.uri.queryParameters
        let answer = await visit.call(
            .get, "\(ConsolePaths.adminApp(appID))/phone_numbers",
            query: [("limit", "\(Self.pageSize)"), ("cursor", query["cursor"].map(String.init))])
        let list = try answer.read(ListAnswer<PhoneBindingAnswer>.self, visit, pages)
        let base = "\(ConsolePaths.app(appID))/phone-numbers"
        let bindings = list.items.map { binding -> [String: Any] in
            var values = binding.templateValues
            values["unbind_action"] = "\(base)/\(ConsolePaths.segment(binding.phoneNumber))/unbind"
            return values
        }
        var data = header.values(current: "phone-numbers").merging(errors) { $1 }
        data["bindings"] = bindings
        data["none"] = bindings.isEmpty
        data["numbers_base"] = base
        if let next = list.nextCursor { data["next_href"] = ConsoleVisit.pathAndQuery(base, [("cursor", next)]) }
        let options = header.app.plugins[PhoneCodePlugin.type]?.decoded(TestNumbersAnswer.self)
        let tests = options?.testNumbers ?? []
        data["test_numbers"] = tests.map(\.templateValues)
        let breakers = try await visit.call(.get, "\(ConsolePaths.adminApp(appID))/send_breakers")
            .read(SendBreakersAnswer.self, visit, pages).sendBreakers
        data["breakers"] = breakers.filter { $0.open && $0.channel == "sms" }.map { breaker -> [String: Any] in
            [
                "prefix": breaker.prefix, "open_until": breaker.openUntil, "threshold": breaker.threshold,
                "release_action": "\(base)/breakers/\(ConsolePaths.segment(breaker.prefix))/release",
            ]
        }
        data["no_test_numbers"] = tests.isEmpty
        var new: [String: Any] = ["phone_number": form?["phone_number"] ?? "", "user_id": form?["user_id"] ?? ""]
        for field in UserProfile.fieldNames { new[field] = form?[field] ?? "" }
        data["new"] = new
        data["profile_fields"] = ProfileForm.fields(values: new, errors: errors)
        data["notice"] = query["notice"].flatMap { Self.notices[String($0)] }
        return pages.page("phone_numbers", title: "Phone numbers", visit: visit, data: data, status: status)
    }
}

extension PhoneCodePlugin: ConsolePageProvider {
    public var consoleTab: ConsoleTab { ConsoleTab(label: "Phone numbers", path: "phone-numbers", credentialType: credentialType) }
    public var consoleTemplates: [(name: String, text: String)] { embeddedConsoleAssets }

    public func addConsolePages(to routes: ConsoleRoutes) {
        PhoneNumberPages(pages: routes.pages).addRoutes(routes)
    }
}
