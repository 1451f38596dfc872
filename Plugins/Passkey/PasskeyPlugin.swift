import Foundation
public import GatewayCore
public import GatewayPluginKit
public import Hummingbird

/// `credentials.type = "passkey"`: sign in with a passkey (WebAuthn): Face
/// ID, a fingerprint, a security key. A user registers passkeys with their
/// live session or through the app's admin API (``PasskeyController``,
/// ``PasskeyAdminController``); signing in needs no user id (the passkey
/// names its user) and no secret the gateway keeps. Options
/// (`plugins.passkey`) are in ``PasskeyOptions`` and docs/plugins.md.
public struct PasskeyPlugin: CredentialPlugin {
    static let type = "passkey"
    public let credentialType = type
    /// The password plugin's users, when it is installed: a passkey of a
    /// user it has disabled signs nobody in, and a sign-in carries the
    /// profile it keeps for the user.
    private let passwords: (any PasswordDirectoryProvider)?

    public init(passwords: (any PasswordDirectoryProvider)? = nil) {
        self.passwords = passwords
    }

    public static func make(_ setup: PluginSetup) -> PasskeyPlugin? {
        PasskeyPlugin(passwords: setup.plugin(offering: (any PasswordDirectoryProvider).self))
    }

    public static var rateLimitPolicies: [RateLimitPolicy] { [.passkeyChallenges] }

    public var optionSchema: OptionSchema? { PasskeyOptions.schema }

    public var migrations: [Migration] {
        embeddedMigrations.map { Migration(source: "passkey", name: $0.name, sql: $0.text) }
    }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        let verified = try PasskeyOptions(options, environment: app.environment)
        let directory = passwords?.openDirectory(for: app, services: services, checking: "passkey sign-ins")
        return PasskeyVerifier(options: verified, store: services.passkeys, directory: directory)
    }

    public func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices) {
        PasskeyController(services: services, registrar: PasskeyRegistrar(store: services.plugin.passkeys)).addRoutes(to: router)
    }

    public func addAdminRoutes(to admin: RouterGroup<GatewayRequestContext>, services: RouteServices) {
        PasskeyAdminController(services: services, registrar: PasskeyRegistrar(store: services.plugin.passkeys))
            .addRoutes(to: admin)
    }
}

extension RateLimitPolicy {
    /// Sign-in challenges per client IP (each is a row until it is used or expires).
    public static let passkeyChallenges = RateLimitPolicy(
        name: "passkey_challenges", limit: 60, periodSeconds: 60, counting: .everyRequest, countsClientAddress: true)
}

extension PasskeyPlugin: HearsUserChanges {
    /// A deletion revokes each of the user's passkeys. A new password, or
    /// an admin ending every session of the user, revokes those a
    /// one-factor session added: the one factor they were bound with may
    /// be in other hands, and they live no longer than the sessions. A
    /// disabled user keeps theirs, refused while disabled, and so does one
    /// whose address changed
    /// (``PasskeyVerifier``). Each with a `passkey.revoked` row like the
    /// admin route's, its `detail.reason` the change's.
    public func hear(_ change: UserChange, services: PluginServices) async throws -> Int {
        let revokes: (StoredPasskey) -> Bool =
            switch change.kind {
            case .deleted: { _ in true }
            case .passwordChanged, .sessionsEnded: { $0.isBoundAtOneFactor }
            case .disabled, .emailChanged: { _ in false }
            }
        guard change.kind != .disabled, change.kind != .emailChanged else { return 0 }
        let store = services.passkeys
        var removed = 0
        for passkey in try await store.passkeys(of: change.userID, in: change.appID) where revokes(passkey) {
            let row = change.row(
                "passkey.revoked", credentialType: Self.type, detail: ["credential_id": Base64URL.encode(passkey.credentialID)])
            if try await store.revoke(passkey.credentialID, of: change.userID, in: change.appID, recording: row) { removed += 1 }
        }
        return removed
    }
}
