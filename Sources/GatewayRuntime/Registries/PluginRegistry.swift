public import GatewayCore
public import GatewayPluginKit

/// The credential plugins of this deployment, by credential type, and its
/// token profiles (``profiles``): what an app's settings may name.
public struct PluginRegistry: Sendable {
    private let plugins: [String: any CredentialPlugin]
    private let order: [String]
    public let profiles: TokenProfileRegistry

    /// - Precondition: no two plugins claim the same credential type, no two profiles a name.
    public init(_ plugins: [any CredentialPlugin], profiles: [any TokenProfile] = []) {
        self.profiles = TokenProfileRegistry(profiles)
        var byType: [String: any CredentialPlugin] = [:]
        for plugin in plugins {
            precondition(byType[plugin.credentialType] == nil, "two plugins claim '\(plugin.credentialType)'")
            byType[plugin.credentialType] = plugin
        }
        self.plugins = byType
        self.order = plugins.map(\.credentialType)
    }

    public var credentialTypes: [String] { order }

    /// Every plugin's ``CredentialPlugin/runInBackground(_:)`` at once, until the task is cancelled.
    public func runInBackground(_ services: BackgroundServices) async {
        await withTaskGroup(of: Void.self) { group in
            for type in order {
                guard let plugin = plugins[type] else { continue }
                group.addTask { await plugin.runInBackground(services) }
            }
        }
    }

    /// Each plugin's ``CredentialPlugin/finish()``, in registration order.
    public func finishAll() async {
        for type in order { await plugins[type]?.finish() }
    }

    /// An app's plugin options with every plugin's secrets replaced by
    /// ``RedactedSecret/marker``, for answers.
    public func redacted(_ options: [String: JSONValue]) -> [String: JSONValue] {
        mapSecrets(options) { _, _, _ in RedactedSecret.marker }
    }

    /// The first plugin setting `updated` loosens from `current` that only an
    /// operator may loosen (``CredentialPlugin/loosening(_:from:in:)``), by
    /// its path; secrets are left out of the comparison (either side may hold
    /// them sealed or redacted).
    public func loosening(of updated: AppSettings, from current: AppSettings) -> String? {
        for type in order {
            guard let plugin = plugins[type], let stored = current.plugins[type], let next = updated.plugins[type] else { continue }
            let placeholder: (String, String) -> String = { _, _ in "secret-left-out-of-the-comparison" }
            if let path = plugin.loosening(
                plugin.mapSecrets(next, placeholder), from: plugin.mapSecrets(stored, placeholder), in: updated)
            {
                return path
            }
        }
        return nil
    }

    /// Each plugin's declared options (``CredentialPlugin/optionSchema``), by credential type, in registration order.
    public var optionSchemas: [(type: String, schema: OptionSchema)] {
        order.compactMap { type in plugins[type]?.optionSchema.map { (type, $0) } }
    }

    /// Refuses options a plugin's declaration does not allow, naming the
    /// member (`plugins.phone_code.code_length`); before the plugins read them.
    public func checkDeclaredOptions(_ options: [String: JSONValue]) throws(GatewayError) {
        for (type, schema) in optionSchemas {
            guard let value = options[type] else { continue }
            try schema.check(value, path: "plugins.\(type)")
        }
    }

    /// `options` with each secret sent back as ``RedactedSecret/marker``
    /// replaced by the one `stored` (opened) holds at the same place, so a
    /// form can leave a secret as it is. Kept only while it would go where it
    /// went: in an object its plugin declares, every destination beside it
    /// (``OptionField/destination``) and the kind (`type`) unchanged; in one
    /// it does not, every other member unchanged. Otherwise the marker stays
    /// and the plugin refuses it, so a kept secret is never sent somewhere new.
    public func keepingSecrets(_ options: [String: JSONValue], stored: [String: JSONValue]) -> [String: JSONValue] {
        var kept = options
        for type in order {
            guard let plugin = plugins[type], let new = options[type], let old = stored[type] else { continue }
            var storedSecrets: [String: String] = [:]
            _ = plugin.mapSecrets(old) { path, value in
                storedSecrets[path] = value
                return value
            }
            kept[type] = plugin.mapSecrets(new) { path, value in
                guard value == RedactedSecret.marker, let secret = storedSecrets[path],
                    Self.goesWhereItWent(path, new: new, old: old, schema: plugin.optionSchema)
                else { return value }
                return secret
            }
        }
        return kept
    }

    /// Whether the object holding the secret at `path` still sends it where it did.
    private static func goesWhereItWent(_ path: String, new: JSONValue, old: JSONValue, schema: OptionSchema?) -> Bool {
        let segments = path.split(separator: ".").map(String.init)
        let parent = Array(segments.dropLast())
        func object(at value: JSONValue) -> [String: JSONValue]? {
            var value = value
            for segment in parent {
                switch value {
                case .object(let members): value = members[segment] ?? .null
                case .array(let elements): value = Int(segment).flatMap { elements.indices.contains($0) ? elements[$0] : nil } ?? .null
                default: return nil
                }
            }
            if case .object(let members) = value { return members }
            return nil
        }
        guard let now = object(at: new), let before = object(at: old) else { return false }
        guard let declared = schema?.declaredFields(at: parent, in: new) else {
            return now.filter { $0.key != segments.last } == before.filter { $0.key != segments.last }
        }
        if declared.isVariant && now["type"] != before["type"] { return false }
        return declared.fields.filter(\.destination).allSatisfy { now[$0.name] == before[$0.name] }
    }

    /// The first declared operator-only option (``OptionField/operatorOnly``)
    /// `updated` changes from `current`, by its path.
    public func operatorOnlyChange(of updated: AppSettings, from current: AppSettings) -> String? {
        for (type, schema) in optionSchemas {
            if let path = schema.operatorOnlyChange(
                updated.plugins[type] ?? .null, from: current.plugins[type] ?? .null, path: "plugins.\(type)")
            {
                return path
            }
        }
        return nil
    }

    /// An app's token profiles with every profile's secrets replaced by
    /// ``RedactedSecret/marker``, for answers.
    public func redacted(_ entries: [TokenProfileEntry]) -> [TokenProfileEntry] {
        profiles.mapSecrets(entries) { _, _, _ in RedactedSecret.marker }
    }

    /// `app` with every plugin and profile secret sealed under `masterKey`
    /// (AES-256-GCM, bound to the app, plugin or profile, and field), as it
    /// is stored. Secrets sealed already stay as they are.
    public func sealingSecrets(of app: AppSettings, with masterKey: MasterKey) throws -> AppSettings {
        try mapEverySecret(of: app) { context, value in
            guard !PluginSecret.isSealed(value) else { return value }
            return try PluginSecret.seal(value, context: context, with: masterKey)
        }
    }

    /// `app` with its plugin and profile secrets opened, as plugins and
    /// profiles read them. A secret stored before sealing existed (plain
    /// text) is taken as it is.
    public func openingSecrets(of app: AppSettings, with masterKey: MasterKey) throws -> AppSettings {
        try mapEverySecret(of: app) { context, value in
            guard PluginSecret.isSealed(value) else { return value }
            return try PluginSecret.open(value, context: context, with: masterKey)
        }
    }

    /// `app` with every secret sealed under the master key's current key:
    /// those under the previous key opened and sealed again, plain ones
    /// (stored before sealing existed) sealed; and how many changed.
    public func resealingSecrets(of app: AppSettings, with masterKey: MasterKey) throws -> (AppSettings, changed: Int) {
        var changed = 0
        let resealed = try mapEverySecret(of: app) { context, value in
            if PluginSecret.isCurrent(value, context: context, with: masterKey) { return value }
            let plain = PluginSecret.isSealed(value) ? try PluginSecret.open(value, context: context, with: masterKey) : value
            changed += 1
            return try PluginSecret.seal(plain, context: context, with: masterKey)
        }
        return (resealed, changed)
    }

    /// `app` with `transform(context, value)` applied to each plugin and
    /// profile secret, `context` binding it to its app, owner and field.
    private func mapEverySecret(
        of app: AppSettings, _ transform: (_ context: String, _ value: String) throws -> String
    ) throws -> AppSettings {
        var mapped = app
        mapped.plugins = try mapSecrets(app.plugins) { type, path, value in
            try transform(PluginSecret.context(app.appID, type, path), value)
        }
        mapped.tokenProfiles = try profiles.mapSecrets(app.tokenProfiles) { type, name, value in
            try transform(PluginSecret.context(app.appID, "token_profile:" + type, name), value)
        }
        return mapped
    }

    private func mapSecrets(
        _ options: [String: JSONValue], _ transform: (_ type: String, _ path: String, _ value: String) throws -> String
    ) rethrows -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (type, value) in options {
            guard let plugin = plugins[type] else {
                result[type] = value
                continue
            }
            result[type] = try plugin.mapSecrets(value) { path, secret in try transform(type, path, secret) }
        }
        return result
    }

    /// The plugins in registration order.
    public var all: [any CredentialPlugin] { order.map { plugins[$0]! } }

    /// Each plugin's migrations, in registration order (they apply after
    /// the core schema, `Migration.core`).
    public var migrations: [Migration] {
        order.flatMap { plugins[$0]!.migrations }
    }

    /// Every plugin's rate-limit policies, with their defaults.
    public var rateLimitPolicies: [RateLimitPolicy] {
        all.flatMap { type(of: $0).rateLimitPolicies }
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
                        .unsupportedCredentialType, .invalidRequest,
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
