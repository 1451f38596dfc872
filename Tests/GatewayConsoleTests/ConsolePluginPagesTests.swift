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
        let gateway = Self.gatewayWithTheDesk()
        let desk = try await gateway.createApp(activeKey: false) { $0.credentialTypes = ["desk"] }
        let plain = try await gateway.createApp(activeKey: false) { _ in }
        try await Self.signedIn(gateway) { browser in
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

    /// A page reads the API's answers as types: an answer without a field
    /// its type needs is a 500 page saying so, not a page with blanks.
    @Test func anAnswerOfTheWrongShapeIsA500PageNotABlankOne() async throws {
        let gateway = Self.gatewayWithTheDesk()
        let desk = try await gateway.createApp(activeKey: false) { $0.credentialTypes = ["desk"] }
        try await Self.signedIn(gateway) { browser in
            let page = try await browser.get("/console/apps/\(desk.appID.uuid.uuidString.lowercased())/desk/misread")
            #expect(page.status == .internalServerError)
            #expect(text(page).contains("The console could not read the admin API&#39;s answer."), "\(text(page))")
            #expect(!text(page).contains("misread:"), "the page that misread renders nothing of its own")
        }
    }

    /// A gateway over memory stores with the console and the desk plugin installed.
    static func gatewayWithTheDesk() -> MemoryGateway {
        let plugins = PluginRegistry([StaticUsersPlugin(), DeskPlugin()])
        return MemoryGateway(
            plugins: plugins,
            frontEnds: { stores, masterKey in
                [try Console(settings: ConsoleSettings(), sessions: stores.consoleSessions, masterKey: masterKey, plugins: plugins)]
            })
    }

    /// Runs `body` with a browser signed in to the console with an operator token.
    static func signedIn(_ gateway: MemoryGateway, _ body: @escaping @Sendable (inout ConsoleBrowser) async throws -> Void)
        async throws
    {
        let token = try await gateway.operatorToken()
        try await gateway.test(over: .router) { client in
            var browser = ConsoleBrowser(client)
            try await browser.signIn(token)
            try await body(&browser)
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
        // Reads the app as if it were a key: `key_id` is missing.
        routes.get("apps/{app_id}/desk/misread") { visit in
            let answer = await visit.call(.get, ConsolePaths.adminApp(visit.parameter("app_id")))
            let misread = try answer.read(Misread.self, visit, pages)
            return pages.page("message", title: "Desk", visit: visit, data: ["message": "misread: \(misread.keyID)"])
        }
    }

    struct Misread: Decodable {
        let keyID: String
        enum CodingKeys: String, CodingKey { case keyID = "key_id" }
    }
}
