public import GatewayCore
public import GatewayPluginKit

/// The token profiles of this deployment, by name: Layer's always, the
/// others as registered (Sources/InstalledPlugins).
public struct TokenProfileRegistry: Sendable {
    private let profiles: [String: any TokenProfile]
    /// Names in registration order, `layer` first.
    public let names: [String]

    /// - Parameter profiles: those besides Layer's, which every registry holds first.
    /// - Precondition: no two profiles share a name (Layer's among them).
    public init(_ profiles: [any TokenProfile]) {
        var byName: [String: any TokenProfile] = [:]
        var names: [String] = []
        for profile in [LayerProfile()] + profiles {
            precondition(byName[profile.name] == nil, "two token profiles are named '\(profile.name)'")
            byName[profile.name] = profile
            names.append(profile.name)
        }
        self.profiles = byName
        self.names = names
    }

    /// The profiles in registration order.
    public var all: [any TokenProfile] { names.map { profiles[$0]! } }

    /// Per profile the app lists, its minter or the error its settings (or
    /// the app's keys) produced, answered to every request for that profile.
    public func minters(
        for app: AppSettings, keys: AppSigningKeys
    ) -> [String: Result<any TokenMinter, GatewayError>] {
        var minters: [String: Result<any TokenMinter, GatewayError>] = [:]
        for entry in app.tokenProfiles {
            guard let profile = profiles[entry.type] else {
                minters[entry.type] = .failure(
                    GatewayError(
                        .unsupportedTokenProfile, .invalidRequest, "Token profile '\(entry.type)' is not available on this gateway."))
                continue
            }
            minters[entry.type] = Result { () throws(GatewayError) in
                try profile.makeMinter(for: app, settings: entry.options, keys: keys)
            }
        }
        return minters
    }

    /// The app's profiles checked as the admin API writes them: known,
    /// distinct, at most ``maximumPerApp``, and each profile accepting its
    /// settings (a missing active key is no fault of the settings).
    public func check(_ app: AppSettings) throws(GatewayError) {
        let listed = app.tokenProfiles.map(\.type)
        guard (1...Self.maximumPerApp).contains(listed.count) else {
            throw .invalidRequest("token_profiles must list 1 to \(Self.maximumPerApp) profiles.")
        }
        guard Set(listed).count == listed.count else { throw .invalidRequest("token_profiles must not repeat a type.") }
        if let unknown = listed.first(where: { profiles[$0] == nil }) {
            throw .invalidRequest(
                "token_profiles: '\(unknown)' is not offered by this gateway (it offers: \(names.joined(separator: ", "))).")
        }
        for case let (_, .failure(error)) in minters(for: app, keys: .none).sorted(by: { $0.key < $1.key })
        where error.code != .noSigningKey {
            throw .invalidRequest(error.message)
        }
    }

    public static let maximumPerApp = 8

    // MARK: Declared settings

    /// `token_profiles` as one shape: a list of the profiles offered, each told apart by its `type`.
    public var optionShape: OptionShape {
        .list(
            of: .variants(all.map { OptionVariant($0.name, description: $0.summary, $0.optionFields) }), count: 1...Self.maximumPerApp)
    }

    /// What `openapi.yaml` publishes as `components.schemas.TokenProfiles`.
    public var jsonSchema: JSONValue {
        guard case .object(var schema) = optionShape.jsonSchemaValue else { return .null }
        schema["description"] = .string(
            "The tokens the app issues, the first for requests that name none (docs/tokens.md, \"Token profiles\"). Each profile's settings are checked strictly; secrets are write-only, sealed at rest and read back as \"********\", which keeps the stored one while the list still has a profile of that type.")
        schema["default"] = .array([.object(["type": .string(LayerProfile().name)])])
        return .object(schema)
    }

    /// Refuses an entry whose settings do not fit its profile's declaration;
    /// the message names the setting as `token_profiles.<type>.<name>`, as
    /// the profiles' own messages do. Unknown types are ``check(_:)``'s.
    public func checkDeclared(_ entries: [TokenProfileEntry]) throws(GatewayError) {
        for entry in entries {
            guard let profile = profiles[entry.type] else { continue }
            try OptionShape.object(profile.optionFields).check(.object(entry.options), path: "token_profiles.\(entry.type)")
        }
    }

    /// `entries` with each secret sent back as ``RedactedSecret/marker``
    /// replaced by the stored one of the profile of the same type: a
    /// profile's secrets sign tokens here and go nowhere, so the type is all
    /// that must not change. A marker with no stored secret stays, and is refused.
    public func keepingSecrets(_ entries: [TokenProfileEntry], stored: [TokenProfileEntry]) -> [TokenProfileEntry] {
        entries.map { entry in
            guard let profile = profiles[entry.type], let before = stored.first(where: { $0.type == entry.type }) else { return entry }
            var kept: [String: String] = [:]
            _ = profile.mapSecrets(before.options) { name, value in
                kept[name] = value
                return value
            }
            var mapped = entry
            mapped.options = profile.mapSecrets(entry.options) { name, value in
                value == RedactedSecret.marker ? kept[name] ?? value : value
            }
            return mapped
        }
    }

    /// `entries` with each profile's secrets replaced by `transform(type, name, value)`.
    func mapSecrets(
        _ entries: [TokenProfileEntry], _ transform: (_ type: String, _ name: String, _ value: String) throws -> String
    ) rethrows -> [TokenProfileEntry] {
        try entries.map { entry in
            guard let profile = profiles[entry.type] else { return entry }
            var mapped = entry
            mapped.options = try profile.mapSecrets(entry.options) { name, value in try transform(entry.type, name, value) }
            return mapped
        }
    }
}
