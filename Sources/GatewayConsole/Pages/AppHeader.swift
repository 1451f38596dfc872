import Foundation
import GatewayCore
import HTTPTypes
import Hummingbird

/// What every page of one app shows above its own part: the app's name and
/// id, and tabs to its other pages (users and phone numbers only where the
/// app uses those credential types).
struct AppHeader {
    let appID: String
    let app: [String: Any]
    /// The app as the API answered it, nulls and all.
    let json: JSONValue

    /// Reads the app; throws the page to answer instead (404 for an app
    /// this token may not see, exactly as the API answers).
    static func load(_ appID: String, _ visit: ConsoleVisit, _ pages: PageRenderer) async throws(PageAnswer) -> AppHeader {
        let answer = await visit.call(.get, ConsolePaths.adminApp(appID))
        guard answer.succeeded, let app = answer.value as? [String: Any] else {
            throw PageAnswer(pages.apiFailure(answer, visit: visit))
        }
        return AppHeader(appID: app["app_id"] as? String ?? appID, app: app, json: answer.json)
    }

    var types: [String] { app["credential_types"] as? [String] ?? [] }

    /// Template values for the header and its tabs; `current` names the tab shown.
    func values(current: String) -> [String: Any] {
        let base = ConsolePaths.app(appID)
        var tabs: [[String: Any]] = [["label": "Settings", "href": base, "current": current == "settings"]]
        tabs.append(["label": "Keys", "href": "\(base)/keys", "current": current == "keys"])
        if types.contains("password") {
            tabs.append(["label": "Users", "href": "\(base)/users", "current": current == "users"])
        }
        if types.contains("phone_code") {
            tabs.append(["label": "Phone numbers", "href": "\(base)/phone-numbers", "current": current == "phone"])
        }
        tabs.append(["label": "Audit", "href": "\(base)/audit", "current": current == "audit"])
        return ["app": app, "app_base": base, "tabs": tabs]
    }
}

/// A finished page, where a helper could not go on (an error page); the
/// routes answer it as the page.
struct PageAnswer: Error {
    let response: Response
    init(_ response: Response) { self.response = response }
}

extension PageRenderer {
    /// The page for an API refusal that is not a form's (a missing app, a lost database).
    func apiFailure(_ answer: APIAnswer, visit: ConsoleVisit) -> Response {
        page(
            "message", title: answer.status == .notFound ? "Not found" : "Request failed", visit: visit,
            data: ["message": answer.errorMessage], status: answer.status)
    }
}
