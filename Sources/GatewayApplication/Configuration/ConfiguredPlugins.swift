import GatewayCore
import GatewayPluginKit
import GatewayRuntime
import InstalledPlugins

/// The plugins set up from the settings, each bad plugin setting noted in
/// `settings` as the gateway's own are. A production deployment leaves out
/// what exists for trying things (static test users, the `log` SMS sender).
func installedPlugins(_ settings: SettingsReader, isDevelopment: Bool, masterKey: MasterKey?) -> PluginRegistry {
    // `serve` always has a master key; `migrate` may not, and verifies no codes.
    let masterKey = masterKey ?? (try! MasterKey(base64: MasterKey.generateBase64()))
    let setup = PluginSetup(isDevelopment: isDevelopment, settings: settings, masterKey: masterKey)
    return PluginRegistry(setup.makePlugins(credentialPlugins), profiles: setup.makeProfiles(tokenProfiles))
}
