/// What a plugin's background work (``CredentialPlugin/runInBackground(_:)``)
/// is lent: its tables and the apps' tenants as the requests see them (an
/// app's sender, its secrets opened, through the plugin's own verifier).
public struct BackgroundServices: Sendable {
    public let plugin: PluginServices
    public let tenants: any TenantLookup

    public init(plugin: PluginServices, tenants: any TenantLookup) {
        self.plugin = plugin
        self.tenants = tenants
    }
}
