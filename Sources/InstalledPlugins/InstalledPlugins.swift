public import GatewayPluginKit
import PasswordPlugin
import PhoneCodePlugin
import StaticUsersPlugin
import WebhookPlugin

/// The credential plugins this gateway offers: one line a plugin.
public let credentialPlugins: [any CredentialPlugin.Type] = [
    StaticUsersPlugin.self,
    PasswordPlugin.self,
    PhoneCodePlugin.self,
    WebhookPlugin.self,
]
