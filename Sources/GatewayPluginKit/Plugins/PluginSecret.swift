import Foundation
public import GatewayCore

/// A plugin secret as stored: `sealed:v1:` and the base64 of what
/// ``MasterKey/seal(_:context:)`` made, its context naming the app, plugin
/// and field, so a sealed value copied to another app or field does not open.
public enum PluginSecret {
    static let prefix = "sealed:v1:"

    public static func isSealed(_ value: String) -> Bool { value.hasPrefix(prefix) }

    public static func context(_ appID: AppID, _ type: String, _ path: String) -> String {
        "plugin-secret|\(appID)|\(type)|\(path)"
    }

    public static func seal(_ value: String, context: String, with masterKey: MasterKey) throws -> String {
        prefix + (try masterKey.seal(Data(value.utf8), context: context)).base64EncodedString()
    }

    public static func open(_ value: String, context: String, with masterKey: MasterKey) throws -> String {
        guard let sealed = Data(base64Encoded: String(value.dropFirst(prefix.count))),
            let text = String(data: try masterKey.open(sealed, context: context), encoding: .utf8)
        else { throw GatewayError.internalError }
        return text
    }

    /// Whether `value` is sealed under the master key's current key already.
    public static func isCurrent(_ value: String, context: String, with masterKey: MasterKey) -> Bool {
        guard isSealed(value), let sealed = Data(base64Encoded: String(value.dropFirst(prefix.count))) else { return false }
        return masterKey.opensWithCurrentKey(sealed, context: context)
    }
}
