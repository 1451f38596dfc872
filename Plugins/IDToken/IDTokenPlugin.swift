public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import GatewayOutbound
public import GatewayCourier
import Crypto

/// `credentials.type = "id_token"`: sign in with Apple, Google or any
/// OpenID provider. The client gets an ID token from the provider's SDK and
/// sends it; the gateway checks it against the provider's published keys and
/// the app's settings (``IDTokenVerifier``), and the verified `sub` becomes
/// the user. Options (`plugins.id_token`) are in ``IDTokenOptions`` and the
/// docs/plugins.md. A provider with `apple_api` also takes the authorization
/// code of a Sign in with Apple sign-in and keeps Apple's refresh token, which
/// a deletion of the user revokes at Apple through the outbox (``AppleRevocations``).
public struct IDTokenPlugin: CredentialPlugin {
    static let type = "id_token"
    public let credentialType = type
    private let keys: ProviderKeys
    private let outbound: OutboundHTTP
    private let grantKey: SymmetricKey
    private let doorbell = OutboxDoorbell()
    private let workerSettings: OutboxWorker.Settings
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
    ///   - grantKey: the key Apple's refresh tokens are sealed under (a random one, for tests, unless given).
    ///   - workerSettings: how the outbox's Apple revocations are delivered.
    public init(
        addresses: OutboundAddressPolicy = OutboundAddressPolicy(allowsPrivateAddresses: false),
        refetchInterval: Duration = .seconds(60), failureBackoff: Duration = .seconds(10),
        passwords: (any PasswordDirectoryProvider)? = nil,
        now: @escaping @Sendable () -> Date = Date.init,
        grantKey: [UInt8]? = nil,
        workerSettings: OutboxWorker.Settings = OutboxWorker.Settings()
    ) {
        self.passwords = passwords
        var timing = ProviderKeys.Timing()
        timing.refetchInterval = refetchInterval
        timing.failureBackoff = failureBackoff
        self.outbound = OutboundHTTP(addresses: addresses)
        self.keys = ProviderKeys(outbound: outbound, timing: timing)
        self.now = now
        self.grantKey = grantKey.map { SymmetricKey(data: $0) } ?? SymmetricKey(size: .bits256)
        self.workerSettings = workerSettings
    }

    /// `id_token.allow_private_addresses` lets providers' keys be fetched
    /// (and Apple's API be called) at private addresses.
    public static func make(_ setup: PluginSetup) -> IDTokenPlugin? {
        IDTokenPlugin(
            addresses: OutboundAddressPolicy(
                allowsPrivateAddresses: setup.settings.boolean("id_token.allow_private_addresses", default: false)),
            passwords: setup.plugin(offering: (any PasswordDirectoryProvider).self),
            grantKey: setup.derivedSecret(for: AppleGrant.keyPurpose))
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
            appleGrants: AppleGrantKeeper(grantKey: grantKey, outbound: outbound, grants: services.appleGrants),
            logger: services.logger, now: now)
    }

    /// Declared: each provider's Apple key (`apple_api.private_key`) is the secret.
    public var optionSchema: OptionSchema? { IDTokenOptions.schema }

    /// Delivers the outbox's Apple revocations until the gateway stops.
    public func runInBackground(_ services: BackgroundServices) async {
        let revocations = AppleRevocations(grantKey: grantKey, outbound: outbound)
        let tenants = services.tenants
        let logger = services.plugin.logger
        await OutboxWorker(
            channel: AppleRevocations.channel, store: services.plugin.outbox, doorbell: doorbell, settings: workerSettings,
            logger: logger, deliver: { await revocations.deliver($0, tenants: tenants, logger: logger) },
            describe: AppleRevocations.row
        ).run()
    }
}

extension IDTokenPlugin: HearsUserChanges {
    /// A deleted user's Apple grants are revoked at Apple, through the
    /// outbox (``AppleRevocations``); nothing else of theirs is kept here.
    public func hear(_ change: UserChange, services: PluginServices) async throws -> Int {
        let queued = try await AppleRevocations(grantKey: grantKey, outbound: outbound).queue(for: change, services: services)
        if queued > 0 { doorbell.ring() }
        return queued
    }
}
