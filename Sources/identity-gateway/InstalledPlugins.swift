import GatewayHTTP
import StaticUsersPlugin

/// The credential plugins this binary offers: one line a plugin.
let installedPlugins = PluginRegistry([
    StaticUsersPlugin()
])
