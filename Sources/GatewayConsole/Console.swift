public import GatewayCore
import GatewayConsoleKit
public import GatewayHTTP
public import GatewayPluginKit
public import GatewayRuntime
import HTTPTypes
public import Hummingbird

/// The operator console under `/console`: server-rendered pages over the
/// admin API. Every page and form is an admin API call made in-process with
/// the signed-in admin token, so the console shows and allows exactly what
/// that token may, every change is audited under it, and no admin rule is
/// kept here twice.
public struct Console: AdminAPIFrontEnd {
    let settings: ConsoleSettings
    let sessions: any ConsoleSessionStore
    let masterKey: MasterKey
    /// The credential types this gateway offers, for the app forms.
    let credentialTypes: [String]
    /// The plugins that add pages of their own.
    let pluginPages: [any ConsolePageProvider]
    let pages: PageRenderer
    /// The declared plugins' option pages.
    let optionPages: OptionPages

    /// The console over `plugins`: its app forms offer their credential
    /// types, and a plugin with pages (``ConsolePageProvider``) adds them.
    public init(
        settings: ConsoleSettings, sessions: any ConsoleSessionStore, masterKey: MasterKey, plugins: PluginRegistry
    ) throws {
        self.settings = settings
        self.sessions = sessions
        self.masterKey = masterKey
        self.credentialTypes = plugins.credentialTypes
        self.pluginPages = plugins.all.compactMap { $0 as? any ConsolePageProvider }
        self.pages = try PageRenderer(
            files: embeddedConsoleAssets + pluginPages.flatMap(\.consoleTemplates), pluginTabs: pluginPages.map(\.consoleTab))
        self.optionPages = OptionPages(pages: pages, plugins: plugins.optionSchemas, profiles: plugins.profiles.optionShape)
    }

    public func addRoutes(to router: Router<GatewayRequestContext>, api: AdminAPI) {
        let group = router.group(RouterPath(ConsolePaths.root))
        if settings.secureCookie { group.add(middleware: StrictTransportSecurityMiddleware()) }
        let gate = SessionGate(settings: settings, sessions: sessions, masterKey: masterKey, api: api)
        let routes = ConsoleRoutes(group: group, pages: pages) { request, context in try await gate.visit(request, context) }
        router.get(RouterPath(ConsolePaths.root)) { request, context in
            guard let visit = try await gate.visit(request, context) else {
                return PageRenderer.redirect("\(ConsolePaths.root)/sign-in")
            }
            return PageRenderer.redirect(visit.scopedAppID.map(ConsolePaths.app) ?? "\(ConsolePaths.root)/apps")
        }
        group.get("assets/{name}") { _, context in
            guard let response = PageRenderer.asset(context.parameters.get("name") ?? "") else {
                throw GatewayError(.notFound, .notFound, "No such console asset.")
            }
            return response
        }
        SignInPages(gate: gate, pages: pages).addRoutes(to: group, routes: routes)
        AppPages(pages: pages, credentialTypes: credentialTypes, optionPages: optionPages).addRoutes(routes)
        optionPages.addRoutes(routes)
        KeyPages(pages: pages).addRoutes(routes)
        AuditPages(pages: pages).addRoutes(routes)
        ValidatorPage(pages: pages).addRoutes(routes)
        AdminTokenPages(pages: pages).addRoutes(routes)
        for plugin in pluginPages { plugin.addConsolePages(to: routes) }
    }
}
