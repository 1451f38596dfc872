import Configuration
import Foundation
import GatewayCore
import GatewayPluginKit
import InstalledPlugins
import Synchronization

/// The plugins set up from the settings, each bad plugin setting added to
/// `problems` as the gateway's own are. A production deployment leaves out
/// what exists for trying things (static test users, the `log` SMS sender).
func installedPlugins(
    reader: ConfigReader, isDevelopment: Bool, masterKey: MasterKey?, problems: inout [String]
) -> PluginRegistry {
    let settings = ConfiguredPluginSettings(reader: reader)
    // `serve` always has a master key; `migrate` may not, and verifies no codes.
    let masterKey = masterKey ?? (try! MasterKey(base64: MasterKey.generateBase64()))
    let setup = PluginSetup(isDevelopment: isDevelopment, settings: settings, masterKey: masterKey)
    let registry = PluginRegistry(setup.makePlugins(credentialPlugins), profiles: setup.makeProfiles(tokenProfiles))
    problems += settings.problems
    return registry
}

/// A plugin's settings keys, read like the gateway's own (``GatewayConfiguration``),
/// each bad value noted for ``installedPlugins(reader:isDevelopment:masterKey:problems:)``.
private final class ConfiguredPluginSettings: PluginSettings {
    private let reader: ConfigReader
    private let noted = Mutex<[String]>([])

    init(reader: ConfigReader) {
        self.reader = reader
    }

    var problems: [String] { noted.withLock { $0 } }

    func integer(_ key: String, in range: ClosedRange<Int>, default value: Int) -> Int {
        var problems: [String] = []
        let number = GatewayConfiguration.integer(
            reader, ConfigKey(key), env: Self.environmentName(key), in: range, default: value, &problems)
        noted.withLock { $0 += problems }
        return number
    }

    func boolean(_ key: String, default value: Bool) -> Bool {
        var problems: [String] = []
        let flag = GatewayConfiguration.boolean(reader, ConfigKey(key), env: Self.environmentName(key), default: value, &problems)
        noted.withLock { $0 += problems }
        return flag
    }

    func httpURL(_ key: String) -> URL? {
        guard let text = reader.string(forKey: ConfigKey(key)), !text.isEmpty else { return nil }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host() != nil,
            url.query == nil, url.fragment == nil, url.user == nil, url.password == nil
        else {
            noted.withLock {
                $0.append("\(key) (\(Self.environmentName(key))): '\(text)' is not an http(s) URL without query, fragment or user")
            }
            return nil
        }
        return url
    }

    /// `sms.allow_private_addresses` → `GATEWAY_SMS_ALLOW_PRIVATE_ADDRESSES`.
    private static func environmentName(_ key: String) -> String {
        "GATEWAY_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }
}
