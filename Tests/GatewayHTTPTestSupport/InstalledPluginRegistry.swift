import GatewayCore
import GatewayPluginKit
public import GatewayRuntime
import InstalledPlugins

extension PluginRegistry {
    /// Every plugin the gateway offers, set up as a development deployment
    /// with default settings: for the tests that walk every route.
    public static let installed: PluginRegistry = {
        let setup = PluginSetup(
            isDevelopment: true, settings: DefaultPluginSettings(), masterKey: try! MasterKey(base64: MasterKey.generateBase64()))
        return PluginRegistry(setup.makePlugins(credentialPlugins), profiles: setup.makeProfiles(tokenProfiles))
    }()
}
