import GatewayHTTP
import PasswordPlugin
import StaticUsersPlugin

/// The credential plugins this binary offers: one line a plugin.
func installedPlugins(_ configuration: GatewayConfiguration) -> PluginRegistry {
    PluginRegistry([
        StaticUsersPlugin(),
        PasswordPlugin(hasher: PasswordHasher(limits: configuration.passwordHashing)),
    ])
}
