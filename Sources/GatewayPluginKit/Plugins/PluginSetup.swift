public import GatewayCore

/// What a plugin is built from when the gateway starts: the deployment's
/// mode, its own settings keys, and keys derived from the master key.
public struct PluginSetup: Sendable {
    /// A development deployment offers what exists for trying things (static
    /// test users, an SMS sender that only logs); a production one does not.
    public let isDevelopment: Bool
    /// The settings file and `GATEWAY_*` variables, for the plugin's own keys.
    public let settings: any PluginSettings
    private let masterKey: MasterKey

    public init(isDevelopment: Bool, settings: any PluginSettings, masterKey: MasterKey) {
        self.isDevelopment = isDevelopment
        self.settings = settings
        self.masterKey = masterKey
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
}

/// No settings: every key answers its default (tests, tools).
public struct DefaultPluginSettings: PluginSettings {
    public init() {}
    public func integer(_ key: String, in range: ClosedRange<Int>, default value: Int) -> Int { value }
    public func boolean(_ key: String, default value: Bool) -> Bool { value }
}
