public import GatewayPluginKit

/// What a credential plugin adds to the console: pages of its own under an
/// app (`/console/apps/{app_id}/<path>`), with a tab in the app's header
/// where the app uses the plugin, and the templates they render. The pages
/// call the admin API through the visit (``ConsoleVisit/call(_:_:json:query:)``),
/// never a store, so the console allows exactly what the API allows.
public protocol ConsolePageProvider: CredentialPlugin {
    /// The tab on the pages of an app whose `credential_types` include this plugin's.
    var consoleTab: ConsoleTab { get }
    /// The plugin's Mustache templates, as a target embeds its `Console/`
    /// folder (`embeddedConsoleAssets`): names must not clash with the console's.
    var consoleTemplates: [(name: String, text: String)] { get }
    /// Adds the plugin's pages; each starts with ``AppHeader/load(_:_:_:)``.
    func addConsolePages(to routes: ConsoleRoutes)
}

/// One tab of an app's header.
public struct ConsoleTab: Sendable {
    public let label: String
    /// The path under the app's console page (`users` for `/console/apps/{app_id}/users`).
    public let path: String
    /// Shown only on apps that accept this credential type.
    public let credentialType: String

    public init(label: String, path: String, credentialType: String) {
        self.label = label
        self.path = path
        self.credentialType = credentialType
    }
}
