import Foundation
import GatewayConsoleKit
import GatewayCore
import HTTPTypes
import Hummingbird

/// The audit trail: an app's (`/console/apps/{app}/audit`) or, for
/// operators, every app's (`/console/audit`), with filters, paging, an
/// NDJSON export of the filtered range and a chart of token requests per
/// minute (issued, and denied by reason).
struct AuditPages: Sendable {
    let pages: PageRenderer

    static let pageSize = 50
    static let filters = ["event", "outcome", "reason", "user_id", "from", "to"]

    func addRoutes(_ routes: ConsoleRoutes) {
        routes.get("apps/{app_id}/audit") { visit in try await trail(visit, appID: visit.parameter("app_id")) }
        routes.get("apps/{app_id}/audit/export") { visit in
            let appID = visit.parameter("app_id")
            return try await export(visit, path: "\(ConsolePaths.adminApp(appID))/audit_events", appQuery: nil)
        }
        routes.get("audit") { visit in
            if let appID = visit.scopedAppID { return PageRenderer.redirect("\(ConsolePaths.app(appID))/audit") }
            return try await trail(visit, appID: nil)
        }
        routes.get("audit/export") { visit in
            try await export(visit, path: "/admin/v1/audit_events", appQuery: Self.appFilter(visit))
        }
    }

    /// The operator page's own app filter.
    static func appFilter(_ visit: ConsoleVisit) -> String? {
        visit.request.uri.queryParameters["app_id"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The filters as the API takes them: times typed in the page's
    /// `datetime-local` fields are UTC (the page says so).
    static func apiFilters(_ visit: ConsoleVisit) -> [(String, String?)] {
        let query = visit.request.uri.queryParameters
        return filters.map { name in
            guard let value = query[name[...]].map(String.init), !value.isEmpty else { return (name, nil) }
            if name == "from" || name == "to" { return (name, utcTime(value)) }
            return (name, value)
        }
    }

    /// `2026-11-25T10:30` (a `datetime-local` value) as RFC 3339 UTC; other text as sent, for the API to judge.
    static func utcTime(_ value: String) -> String {
        let local = value.count == 16 ? value + ":00Z" : value.count == 19 ? value + "Z" : value
        return local
    }

    private func trail(_ visit: ConsoleVisit, appID: String?) async throws -> Response {
        var data: [String: Any] = [:]
        let base: String
        let apiBase: String
        var appQuery: String?
        if let appID {
            let header = try await AppHeader.load(appID, visit, pages)
            data = header.values(current: "audit")
            base = "\(ConsolePaths.app(appID))/audit"
            apiBase = ConsolePaths.adminApp(appID)
        } else {
            base = "\(ConsolePaths.root)/audit"
            apiBase = "/admin/v1"
            appQuery = Self.appFilter(visit)
            data["all_apps"] = true
            data["app_filter"] = appQuery ?? ""
        }
        let query = visit.request.uri.queryParameters
        let filters = Self.apiFilters(visit)
        let answer = await visit.call(
            .get, "\(apiBase)/audit_events",
            query: [("app_id", appQuery)] + filters + [("limit", "\(Self.pageSize)"), ("cursor", query["cursor"].map(String.init))])
        guard answer.succeeded else {
            data["error"] = answer.errorMessage
            data["chart"] = ""
            return render(visit, data: data, base: base, status: answer.status)
        }
        let list = try answer.read(ListAnswer<AuditEventAnswer>.self, visit, pages)
        data["events"] = list.items.map(\.templateValues)
        data["none"] = list.items.isEmpty
        let pageFilters: [(String, String?)] = [("app_id", appQuery)]
            + Self.filters.map { ($0, query[$0[...]].map(String.init).flatMap { $0.isEmpty ? nil : $0 }) }
        if let next = list.nextCursor {
            data["next_href"] = ConsoleVisit.pathAndQuery(base, pageFilters + [("cursor", next)])
        }
        data["export_href"] = ConsoleVisit.pathAndQuery("\(base)/export", pageFilters)

        let range = filters.filter { $0.0 == "from" || $0.0 == "to" }
        let counts = await visit.call(.get, "\(apiBase)/audit_events:per_minute", query: [("app_id", appQuery)] + range)
        if counts.succeeded {
            data["chart"] = AuditChart(counts.json).svg()
        } else {
            data["chart_error"] = counts.errorMessage
        }
        return render(visit, data: data, base: base, status: .ok)
    }

    private func render(_ visit: ConsoleVisit, data: [String: Any], base: String, status: HTTPResponse.Status) -> Response {
        let query = visit.request.uri.queryParameters
        var data = data
        var shown: [String: Any] = [:]
        for name in Self.filters { shown[name] = query[name[...]].map(String.init) ?? "" }
        shown["success"] = shown["outcome"] as? String == "success"
        shown["failure"] = shown["outcome"] as? String == "failure"
        shown["has_from"] = !(shown["from"] as? String ?? "").isEmpty
        data["filter"] = shown
        data["audit_base"] = base
        return pages.page("audit", title: "Audit", visit: visit, data: data, status: status)
    }

    /// The API's NDJSON stream itself, as a download.
    private func export(_ visit: ConsoleVisit, path: String, appQuery: String?) async throws -> Response {
        var response = await visit.stream(path, query: [("app_id", appQuery)] + Self.apiFilters(visit), accept: "application/x-ndjson")
        guard response.status == .ok else {
            return pages.apiFailure(await APIAnswer.read(response), visit: visit)
        }
        for field in PageRenderer.securityHeaders { response.headers[field.name] = field.value }
        response.headers[.contentDisposition] = #"attachment; filename="audit-events.ndjson""#
        return response
    }
}
