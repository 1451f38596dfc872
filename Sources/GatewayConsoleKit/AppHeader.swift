import Foundation
import GatewayCore
import HTTPTypes
public import Hummingbird

/// What every page of one app shows above its own part: the app's name and
/// id, and tabs to its other pages (a plugin's only where the app uses that
/// credential type).
public struct AppHeader {
    /// The app as the API answered it.
    public let app: AppAnswer
    let pluginTabs: [ConsoleTab]

    public var appID: String { app.appID }
    /// The credential types the app accepts.
    public var types: [String] { app.credentialTypes }

    /// Reads the app; throws the page to answer instead (404 for an app
    /// this token may not see, exactly as the API answers).
    public static func load(_ appID: String, _ visit: ConsoleVisit, _ pages: PageRenderer) async throws(PageAnswer) -> AppHeader {
        let answer = await visit.call(.get, ConsolePaths.adminApp(appID))
        return AppHeader(app: try answer.read(AppAnswer.self, visit, pages), pluginTabs: pages.pluginTabs)
    }

    /// Template values for the header and its tabs; `current` names the tab
    /// shown (`settings`, `keys`, `audit`, or a plugin tab's path).
    public func values(current: String) -> [String: Any] {
        let base = ConsolePaths.app(appID)
        func tab(_ label: String, _ path: String?, _ name: String) -> [String: Any] {
            ["label": label, "href": path.map { "\(base)/\($0)" } ?? base, "current": current == name]
        }
        var tabs = [tab("Settings", nil, "settings"), tab("Keys", "keys", "keys")]
        for plugin in pluginTabs where types.contains(plugin.credentialType) {
            tabs.append(tab(plugin.label, plugin.path, plugin.path))
        }
        tabs.append(tab("Audit", "audit", "audit"))
        return ["app": app.templateValues, "app_base": base, "tabs": tabs]
    }
}

/// A finished page, where a helper could not go on (an error page); the
/// routes answer it as the page.
public struct PageAnswer: Error {
    public let response: Response
    public init(_ response: Response) { self.response = response }
}

extension PageRenderer {
    /// The page for an API refusal that is not a form's (a missing app, a lost database).
    public func apiFailure(_ answer: APIAnswer, visit: ConsoleVisit) -> Response {
        page(
            "message", title: answer.status == .notFound ? "Not found" : "Request failed", visit: visit,
            data: ["message": answer.errorMessage], status: answer.status)
    }
}
