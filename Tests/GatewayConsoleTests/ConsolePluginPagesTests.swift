import Foundation
import GatewayConsole
import GatewayConsoleKit
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import StaticUsersPlugin
import Testing

/// A plugin written against the console's kit adds a page under each app
/// that uses it, and a tab on those apps only; the console's own code names
/// no plugin. Over memory stores: no database.
@Suite struct ConsolePluginPagesTests {
    @Test func aPluginsPageAndTabAppearOnlyOnTheAppsThatUseIt() async throws {
        let plugins = PluginRegistry([StaticUsersPlugin(), DeskPlugin()])
        let gateway = MemoryGateway(
            plugins: plugins,
            frontEnds: { stores, masterKey in
                [try Console(settings: ConsoleSettings(), sessions: stores.consoleSessions, masterKey: masterKey, plugins: plugins)]
            })
        let desk = try await gateway.createApp(activeKey: false) { $0.credentialTypes = ["desk"] }
        let plain = try await gateway.createApp(activeKey: false) { _ in }
        let token = try await gateway.operatorToken()
        try await gateway.test(over: .router) { client in
            var browser = ConsoleBrowser(client)
            try await browser.signIn(token)

            let page = try await browser.get("/console/apps/\(desk.appID.uuid.uuidString.lowercased())/desk")
            #expect(page.status == .ok)
            let html = text(page)
            #expect(html.contains("<p id=\"desk\">The desk of Test app</p>"), "\(html)")
            #expect(html.contains(">Front desk</a>"))
            #expect(html.contains("aria-current=\"page\">Front desk</a>"), "its own tab is the current one")

            let settings = text(try await browser.get("/console/apps/\(plain.appID.uuid.uuidString.lowercased())"))
            #expect(settings.contains(">Keys</a>"))
            #expect(!settings.contains("Front desk"), "an app that does not use the plugin shows no tab")
        }
    }
}

/// A plugin with one console page, as a plugin's folder would hold it.
private struct DeskPlugin: CredentialPlugin, ConsolePageProvider {
    let credentialType = "desk"

    static func make(_ setup: PluginSetup) -> DeskPlugin? { DeskPlugin() }

    func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        throw GatewayError.invalidRequest("The desk signs nobody in.")
    }

    var consoleTab: ConsoleTab { ConsoleTab(label: "Front desk", path: "desk", credentialType: credentialType) }
    var consoleTemplates: [(name: String, text: String)] {
        [("desk.mustache", #"{{<layout}}{{$content}}{{> app_header}}<p id="desk">The desk of {{app.name}}</p>{{/content}}{{/layout}}"#)]
    }

    func addConsolePages(to routes: ConsoleRoutes) {
        let pages = routes.pages
        routes.get("apps/{app_id}/desk") { visit in
            let header = try await AppHeader.load(visit.parameter("app_id"), visit, pages)
            return pages.page("desk", title: "Desk", visit: visit, data: header.values(current: "desk"))
        }
    }
}
