import GatewayHTTP
import GatewayCore
import PasswordPlugin
import PhoneCodePlugin
import StaticUsersPlugin

/// The credential plugins this binary offers: one line a plugin.
func installedPlugins(_ configuration: GatewayConfiguration) -> PluginRegistry {
    PluginRegistry([
        StaticUsersPlugin(),
        PasswordPlugin(hasher: PasswordHasher(limits: configuration.passwordHashing)),
        PhoneCodePlugin(codeKey: codeKeySource(configuration).derivedSecret(for: PhoneCodePlugin.keyPurpose)),
    ])
}

/// `serve` always has a master key; `migrate` may not, and verifies no codes.
private func codeKeySource(_ configuration: GatewayConfiguration) -> MasterKey {
    configuration.masterKey ?? (try! MasterKey(base64: MasterKey.generateBase64()))
}
