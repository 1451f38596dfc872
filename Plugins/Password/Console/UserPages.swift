import Foundation
import GatewayCore
import HTTPTypes
public import GatewayConsoleKit
import Hummingbird

/// An app's password users: list and search by prefix, create, import an
/// NDJSON file with the API's per-line report, and one user's page (reset
/// the password, edit the profile, turn off or on, delete, see and end their
/// sessions, see and reset their second factor). A password typed here is sent to the API and never shown again.
struct UserPages: Sendable {
    let pages: PageRenderer

    static let pageSize = 25
    static let notices = [
        "created": "User saved.", "password": "Password changed.", "saved": "Profile saved.",
        "disabled": "User turned off: their logins are refused.", "enabled": "User turned on.", "deleted": "User deleted.",
        "session_ended": "Session ended: its refresh token is refused.", "sessions_ended": "Every session of the user ended.",
        "mfa_reset": "Second factor reset: the user's next sign-in asks for no code, or for a new enrolment.",
        "verification_sent": "A new code is on its way to the user's address; the one before no longer works.",
    ]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/users") { visit in try await list(visit, form: nil, errors: [:]) }
        routes.post("apps/{app_id}/users") { visit, form in try await create(visit, form) }
        routes.post("apps/{app_id}/users/import", maximumBytes: FormInput.largestImport) { visit, form in
            try await importFile(visit, form)
        }
        routes.get("apps/{app_id}/users/{user_id}") { visit in try await user(visit, errors: [:]) }
        routes.post("apps/{app_id}/users/{user_id}/password") { visit, form in
            try await change(visit, ["password": .string(form["password"] ?? "")], notice: "password", fields: ["password"])
        }
        routes.post("apps/{app_id}/users/{user_id}/profile") { visit, form in
            var body: [String: JSONValue] = [:]
            for field in UserProfile.fieldNames { body[field] = .string(form[field] ?? "") }
            return try await change(visit, body, notice: "saved", fields: UserProfile.fieldNames)
        }
        routes.post("apps/{app_id}/users/{user_id}/disabled") { visit, form in
            let disabled = form["disabled"] == "true"
            return try await change(visit, ["disabled": .bool(disabled)], notice: disabled ? "disabled" : "enabled")
        }
        routes.post("apps/{app_id}/users/{user_id}/sessions/end") { visit, form in
            let appID = visit.parameter("app_id")
            let userID = visit.parameter("user_id")
            let path =
                if let sessionID = form.text("session_id") {
                    "\(ConsolePaths.adminApp(appID))/sessions/\(ConsolePaths.segment(sessionID))"
                } else {
                    "\(Self.apiPath(appID, userID))/sessions"
                }
            let answer = await visit.call(.delete, path)
            guard answer.succeeded else { return try await user(visit, errors: ["error": answer.errorMessage], status: answer.status) }
            let notice = form.text("session_id") == nil ? "sessions_ended" : "session_ended"
            return PageRenderer.redirect("\(Self.pagePath(appID, userID))?notice=\(notice)")
        }
        routes.post("apps/{app_id}/users/{user_id}/mfa/reset") { visit, _ in
            try await act(visit, .delete, "mfa", notice: "mfa_reset")
        }
        routes.post("apps/{app_id}/users/{user_id}/verification") { visit, _ in
            try await act(visit, .post, "verification", notice: "verification_sent")
        }
        routes.post("apps/{app_id}/users/{user_id}/delete") { visit, _ in
            let appID = visit.parameter("app_id")
            let answer = await visit.call(.delete, Self.apiPath(appID, visit.parameter("user_id")))
            guard answer.succeeded else { return try await user(visit, errors: ["error": answer.errorMessage], status: answer.status) }
            return PageRenderer.redirect("\(ConsolePaths.app(appID))/users?notice=deleted")
        }
    }

    /// Calls the user's API resource `part` with `method`; back to their page with `notice`, or the error on it.
    private func act(_ visit: ConsoleVisit, _ method: HTTPRequest.Method, _ part: String, notice: String) async throws -> Response {
        let appID = visit.parameter("app_id")
        let userID = visit.parameter("user_id")
        let answer = await visit.call(method, "\(Self.apiPath(appID, userID))/\(part)")
        guard answer.succeeded else { return try await user(visit, errors: ["error": answer.errorMessage], status: answer.status) }
        return PageRenderer.redirect("\(Self.pagePath(appID, userID))?notice=\(notice)")
    }

    static func apiPath(_ appID: String, _ userID: String) -> String {
        "\(ConsolePaths.adminApp(appID))/users/\(ConsolePaths.segment(userID))"
    }

    static func pagePath(_ appID: String, _ userID: String) -> String {
        "\(ConsolePaths.app(appID))/users/\(ConsolePaths.segment(userID))"
    }

    private func list(
        _ visit: ConsoleVisit, form: FormInput?, errors: [String: Any], report: ImportReportAnswer? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let appID = visit.parameter("app_id")
        let header = try await AppHeader.load(appID, visit, pages)
        let query = visit.request.uri.queryParameters
        let prefix = query["prefix"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        // Only the self-service accounts still waiting for their address's code.
        let waiting = query["email_verified"] == "false" ? "false" : nil
        let answer = await visit.call(
            .get, "\(ConsolePaths.adminApp(appID))/users",
            query: [
                ("limit", "\(Self.pageSize)"), ("prefix", prefix), ("email_verified", waiting),
                ("cursor", query["cursor"].map(String.init)),
            ])
        let list = try answer.read(ListAnswer<UserAnswer>.self, visit, pages)
        let users = list.items.map { user -> [String: Any] in
            var values = user.templateValues
            values["href"] = Self.pagePath(appID, user.userID)
            return values
        }
        var data = header.values(current: "users").merging(errors) { $1 }
        data["users"] = users
        data["none"] = users.isEmpty
        data["prefix"] = prefix ?? ""
        data["waiting"] = waiting != nil
        data["users_base"] = "\(ConsolePaths.app(appID))/users"
        if let next = list.nextCursor {
            data["next_href"] = ConsoleVisit.pathAndQuery(
                "\(ConsolePaths.app(appID))/users", [("prefix", prefix), ("email_verified", waiting), ("cursor", next)])
        }
        // What was typed comes back after a refusal, except the password.
        var new: [String: Any] = ["user_id": form?["user_id"] ?? ""]
        for field in UserProfile.fieldNames { new[field] = form?[field] ?? "" }
        data["new"] = new
        data["profile_fields"] = ProfileForm.fields(values: new, errors: errors)
        if let report { data["report"] = report.templateValues }
        data["notice"] = query["notice"].flatMap { Self.notices[String($0)] }
        return pages.page("users", title: "Users", visit: visit, data: data, status: status)
    }

    private func create(_ visit: ConsoleVisit, _ form: FormInput) async throws -> Response {
        let appID = visit.parameter("app_id")
        guard let userID = form.text("user_id") else {
            return try await list(visit, form: form, errors: FormErrors.local("user_id", "Enter a user id."), status: .badRequest)
        }
        var body: [String: JSONValue] = ["password": .string(form["password"] ?? "")]
        for field in UserProfile.fieldNames { if let value = form.text(field) { body[field] = .string(value) } }
        let answer = await visit.call(.put, Self.apiPath(appID, userID), json: body)
        guard answer.succeeded else {
            return try await list(
                visit, form: form, errors: FormErrors.place(answer.errorMessage, fields: ["user_id", "password"] + UserProfile.fieldNames),
                status: answer.status)
        }
        return PageRenderer.redirect("\(Self.pagePath(appID, userID))?notice=created")
    }

    /// The file's text (read into the form by the page's script, or pasted)
    /// goes to the API's NDJSON import as it is; the page shows its report.
    private func importFile(_ visit: ConsoleVisit, _ form: FormInput) async throws -> Response {
        let appID = visit.parameter("app_id")
        let text = form["ndjson"] ?? ""
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return try await list(visit, form: nil, errors: FormErrors.local("ndjson", "Choose a file or paste its lines."), status: .badRequest)
        }
        let answer = await visit.call(.post, "\(ConsolePaths.adminApp(appID))/users:import", body: text, contentType: "application/x-ndjson")
        guard answer.succeeded else {
            return try await list(visit, form: nil, errors: FormErrors.place(answer.errorMessage, fields: ["ndjson"]), status: answer.status)
        }
        return try await list(visit, form: nil, errors: [:], report: try answer.read(ImportReportAnswer.self, visit, pages))
    }

    private func change(_ visit: ConsoleVisit, _ body: [String: JSONValue], notice: String, fields: [String] = []) async throws
        -> Response
    {
        let appID = visit.parameter("app_id")
        let userID = visit.parameter("user_id")
        let answer = await visit.call(.patch, Self.apiPath(appID, userID), json: body)
        guard answer.succeeded else {
            return try await user(visit, errors: FormErrors.place(answer.errorMessage, fields: fields), status: answer.status)
        }
        return PageRenderer.redirect("\(Self.pagePath(appID, userID))?notice=\(notice)")
    }

    private func user(_ visit: ConsoleVisit, errors: [String: Any], status: HTTPResponse.Status = .ok) async throws -> Response {
        let appID = visit.parameter("app_id")
        let userID = visit.parameter("user_id")
        let header = try await AppHeader.load(appID, visit, pages)
        let answer = await visit.call(.get, Self.apiPath(appID, userID))
        let user = try answer.read(UserAnswer.self, visit, pages)
        let sessions = try await visit.call(.get, "\(Self.apiPath(appID, userID))/sessions")
            .read(ListAnswer<SessionAnswer>.self, visit, pages).items.map(\.templateValues)
        var data = header.values(current: "users").merging(errors) { $1 }
        data["user"] = user.templateValues
        data["sessions"] = sessions
        data["no_sessions"] = sessions.isEmpty
        // 404: no factor (or an app without the second factor's tables' rows for them).
        let factor = await visit.call(.get, "\(Self.apiPath(appID, userID))/mfa")
        if factor.status != .notFound { data["mfa"] = try factor.read(SecondFactorAnswer.self, visit, pages).templateValues }
        data["profile_fields"] = ProfileForm.fields(values: user.profile.values, errors: errors)
        data["user_base"] = Self.pagePath(appID, userID)
        data["disabled"] = user.disabled
        data["notice"] = visit.request.uri.queryParameters["notice"].flatMap { Self.notices[String($0)] }
        return pages.page("user", title: "User \(userID)", visit: visit, data: data, status: status)
    }
}

extension PasswordPlugin: ConsolePageProvider {
    public var consoleTab: ConsoleTab { ConsoleTab(label: "Users", path: "users", credentialType: credentialType) }
    public var consoleTemplates: [(name: String, text: String)] { embeddedConsoleAssets }

    public func addConsolePages(to routes: ConsoleRoutes) {
        UserPages(pages: routes.pages).addRoutes(routes)
    }
}
