import GatewayHTTP
import GatewayCore
import PasswordPlugin
import PhoneCodePlugin
import StaticUsersPlugin

/// The credential plugins this binary offers: one line a plugin.
/// Production mode leaves out what exists for trying things: static test
/// users and the `log` SMS sender, unless `everyMode` asks for every plugin
/// an app's stored options may name (to re-seal their secrets).
func installedPlugins(_ configuration: GatewayConfiguration, everyMode: Bool = false) -> PluginRegistry {
    let development = everyMode || configuration.mode == .development
    let plugins: [(any CredentialPlugin)?] = [
        development ? StaticUsersPlugin() : nil,
        PasswordPlugin(hasher: PasswordHasher(limits: configuration.passwordHashing)),
        PhoneCodePlugin(
            codeKey: codeKeySource(configuration).derivedSecret(for: PhoneCodePlugin.keyPurpose),
            allowsLogSender: development,
            senderAddresses: SenderAddressPolicy(allowsPrivateAddresses: configuration.smsAllowsPrivateAddresses)),
    ]
    return PluginRegistry(plugins.compactMap { $0 })
}

/// `serve` always has a master key; `migrate` may not, and verifies no codes.
private func codeKeySource(_ configuration: GatewayConfiguration) -> MasterKey {
    configuration.masterKey ?? (try! MasterKey(base64: MasterKey.generateBase64()))
}
