public import Foundation
public import GatewayCore
import Synchronization

/// What a plugin is built from when the gateway starts: the deployment's
/// mode, its own settings keys, and keys derived from the master key.
public struct PluginSetup: Sendable {
    /// A development deployment offers what exists for trying things (static
    /// test users, an SMS sender that only logs); a production one does not.
    public let isDevelopment: Bool
    /// The settings file and `GATEWAY_*` variables, for the plugin's own keys.
    public let settings: any PluginSettings
    private let masterKey: MasterKey
    private let madeSoFar = MadePlugins()

    public init(isDevelopment: Bool, settings: any PluginSettings, masterKey: MasterKey) {
        self.isDevelopment = isDevelopment
        self.settings = settings
        self.masterKey = masterKey
    }

    /// Sets up each of `types` in order (``CredentialPlugin/make(_:)``); a
    /// plugin may use what those set up before it offer (``plugin(offering:)``).
    public func makePlugins(_ types: [any CredentialPlugin.Type]) -> [any CredentialPlugin] {
        types.compactMap { type in
            let plugin = type.make(self)
            if let plugin { madeSoFar.append(plugin) }
            return plugin
        }
    }

    /// Sets up each of `types` (``TokenProfile/make(_:)``), leaving out those not offered.
    public func makeProfiles(_ types: [any TokenProfile.Type]) -> [any TokenProfile] {
        types.compactMap { $0.make(self) }
    }

    /// The first plugin registered before the one being set up that offers
    /// `capability`, a protocol of the seam (``PasswordDirectoryProvider``,
    /// for a plugin that moves users into a password directory), as this
    /// deployment set it up; nil where none is installed or offered. A
    /// plugin names what it needs, never another plugin's module. Plugins
    /// share its instance, and with it its limits (the password hasher's queue).
    public func plugin<Capability>(offering capability: Capability.Type) -> Capability? {
        madeSoFar.first(offering: Capability.self)
    }

    /// A 32-byte key of the plugin's own (``MasterKey/derivedSecret(for:)``);
    /// the master key itself stays with the gateway.
    public func derivedSecret(for purpose: String) -> [UInt8] {
        masterKey.derivedSecret(for: purpose)
    }
}

/// A plugin's own settings keys, read as the gateway reads its own: from the
/// settings file by key (`sms.allow_private_addresses`) or from the
/// environment variable the key names (`GATEWAY_SMS_ALLOW_PRIVATE_ADDRESSES`).
/// A bad value is reported with the gateway's, before anything starts, and
/// the default is answered meanwhile.
public protocol PluginSettings: Sendable {
    func integer(_ key: String, in range: ClosedRange<Int>, default value: Int) -> Int
    func boolean(_ key: String, default value: Bool) -> Bool
    /// The key's absolute `http`/`https` URL (no query, fragment or
    /// credentials), `nil` where it is not set; anything else is a bad value.
    func httpURL(_ key: String) -> URL?
    /// The key's path of a readable file, `nil` where it is not set; a file
    /// that cannot be read is a bad value.
    func filePath(_ key: String) -> String?
}

/// No settings: every key answers its default (tests, tools).
public struct DefaultPluginSettings: PluginSettings {
    public init() {}
    public func integer(_ key: String, in range: ClosedRange<Int>, default value: Int) -> Int { value }
    public func boolean(_ key: String, default value: Bool) -> Bool { value }
    public func httpURL(_ key: String) -> URL? { nil }
    public func filePath(_ key: String) -> String? { nil }
}

/// The plugins ``PluginSetup/makePlugins(_:)`` has made so far.
private final class MadePlugins: Sendable {
    private let plugins = Mutex<[any CredentialPlugin]>([])

    func append(_ plugin: any CredentialPlugin) {
        plugins.withLock { $0.append(plugin) }
    }

    func first<Capability>(offering type: Capability.Type) -> Capability? {
        plugins.withLock { plugins in plugins.lazy.compactMap { $0 as? Capability }.first }
    }
}
