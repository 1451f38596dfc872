public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import GatewayOutbound

/// `credentials.type = "id_token"`: sign in with Apple, Google or any
/// OpenID provider. The client gets an ID token from the provider's SDK and
/// sends it; the gateway checks it against the provider's published keys and
/// the app's settings (``IDTokenVerifier``), and the verified `sub` becomes
/// the user. Options (`plugins.id_token`) are in ``IDTokenOptions`` and the
/// docs/plugins.md.
public struct IDTokenPlugin: CredentialPlugin {
    static let type = "id_token"
    public let credentialType = type
    private let keys: ProviderKeys
    private let passwords: (any PasswordDirectoryProvider)?
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - addresses: where providers' keys may be fetched from; public
    ///     addresses only unless the operator allows private ones.
    ///   - refetchInterval: the least time between two fetches of a
    ///     provider's keys for tokens naming a key it lacks.
    ///   - failureBackoff: how long after a failed fetch no fetch is tried.
    ///   - passwords: the password plugin whose users a verified email may be linked to; nil where it is not installed.
    ///   - now: the clock tokens' times are checked against.
    public init(
        addresses: OutboundAddressPolicy = OutboundAddressPolicy(allowsPrivateAddresses: false),
        refetchInterval: Duration = .seconds(60), failureBackoff: Duration = .seconds(10),
        passwords: (any PasswordDirectoryProvider)? = nil,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.passwords = passwords
        var timing = ProviderKeys.Timing()
        timing.refetchInterval = refetchInterval
        timing.failureBackoff = failureBackoff
        self.keys = ProviderKeys(outbound: OutboundHTTP(addresses: addresses), timing: timing)
        self.now = now
    }

    /// `id_token.allow_private_addresses` lets providers' keys be fetched from private addresses.
    public static func make(_ setup: PluginSetup) -> IDTokenPlugin? {
        IDTokenPlugin(
            addresses: OutboundAddressPolicy(
                allowsPrivateAddresses: setup.settings.boolean("id_token.allow_private_addresses", default: false)),
            passwords: setup.plugin(offering: (any PasswordDirectoryProvider).self))
    }

    public var migrations: [Migration] {
        embeddedMigrations.map { Migration(source: "id_token", name: $0.name, sql: $0.text) }
    }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        let options = try IDTokenOptions(options, environment: app.environment, passwordsInstalled: passwords != nil)
        return IDTokenVerifier(
            options: options, keys: keys,
            passwords: try options.linksVerifiedEmailToPasswords ? passwords?.directory(for: app, services: services) : nil,
            uses: services.idTokenUses,
            logger: services.logger, now: now)
    }
}
