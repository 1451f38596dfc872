public import GatewayCore
public import GatewayPostgres

/// The credential plugins of this deployment, by credential type.
public struct PluginRegistry: Sendable {
    private let plugins: [String: any CredentialPlugin]
    private let order: [String]

    /// - Precondition: no two plugins claim the same credential type.
    public init(_ plugins: [any CredentialPlugin]) {
        var byType: [String: any CredentialPlugin] = [:]
        for plugin in plugins {
            precondition(byType[plugin.credentialType] == nil, "two plugins claim '\(plugin.credentialType)'")
            byType[plugin.credentialType] = plugin
        }
        self.plugins = byType
        self.order = plugins.map(\.credentialType)
    }

    public var credentialTypes: [String] { order }

    /// An app's plugin options with every plugin's secrets replaced, for answers.
    public func redacted(_ options: [String: JSONValue]) -> [String: JSONValue] {
        options.reduce(into: [:]) { result, entry in
            result[entry.key] = plugins[entry.key]?.redacted(entry.value) ?? entry.value
        }
    }

    /// The plugins in registration order.
    public var all: [any CredentialPlugin] { order.map { plugins[$0]! } }

    /// The core migrations, then each plugin's, in registration order.
    public var migrations: [Migration] {
        Migration.core + order.flatMap { plugins[$0]!.migrations }
    }

    /// One verifier per credential type the app accepts; a type no plugin
    /// provides, or options a plugin refuses, become that type's error.
    public func verifiers(
        for app: AppSettings, services: PluginServices
    ) -> [String: Result<any CredentialVerifier, GatewayError>] {
        var verifiers: [String: Result<any CredentialVerifier, GatewayError>] = [:]
        for type in app.credentialTypes {
            guard let plugin = plugins[type] else {
                verifiers[type] = .failure(
                    GatewayError(
                        .unsupportedCredentialType, status: 400,
                        "Credential type '\(type)' is not available on this gateway."))
                continue
            }
            verifiers[type] = Result { () throws(GatewayError) in
                try plugin.makeVerifier(for: app, options: app.plugins[type] ?? .null, services: services)
            }
        }
        return verifiers
    }
}
