public import GatewayPluginKit
import EmailCodePlugin
import FirebaseProfile
import IDTokenPlugin
import OIDCProfile
import PasskeyPlugin
import PasswordPlugin
import PhoneCodePlugin
import StaticUsersPlugin
import StreamProfile
import TwilioProfile
import WebhookPlugin

/// The credential plugins this gateway offers: one line a plugin.
public let credentialPlugins: [any CredentialPlugin.Type] = [
    StaticUsersPlugin.self,
    PasswordPlugin.self,
    PhoneCodePlugin.self,
    EmailCodePlugin.self,
    WebhookPlugin.self,
    IDTokenPlugin.self,
    PasskeyPlugin.self,
]

/// The token profiles this gateway offers besides Layer's: one line a profile.
public let tokenProfiles: [any TokenProfile.Type] = [
    OIDCProfile.self,
    FirebaseProfile.self,
    StreamProfile.self,
    TwilioProfile.self,
]
