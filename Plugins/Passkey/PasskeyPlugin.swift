public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import Hummingbird
import Logging

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

    public var migrations: [Migration] {
        embeddedMigrations.map { Migration(source: "passkey", name: $0.name, sql: $0.text) }
    }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        let verified = try PasskeyOptions(options, environment: app.environment)
        var directory: (any PasswordDirectory)?
        do {
            directory = try passwords?.directory(for: app, services: services)
        } catch {
            // Password options the operator's argon2 ceiling no longer allows fail the app's password logins
            // (a 400 naming them); passkeys then sign in without the directory's word rather than not at all,
            // and the operator is told which app, once each time the app is loaded.
            services.logger.warning(
                "passkey sign-ins of this app are not checked against its password users",
                metadata: ["app_id": "\(app.appID)", "error": "\(error.message)"])
        }
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

extension PasskeyPlugin: HoldsUserCredentials {
    /// Revokes each of the user's passkeys, each with a `passkey.revoked`
    /// row like the admin route's, its `detail.reason` `user_deleted`.
    public func removeCredentials(
        of userID: String, in appID: AppID, requestID: String, actor: UUID?, services: PluginServices
    ) async throws -> Int {
        let store = services.passkeys
        var removed = 0
        for passkey in try await store.passkeys(of: userID, in: appID) {
            let row = AuditEvent(
                appID: appID, event: "passkey.revoked", outcome: .success, userID: userID,
                credentialType: Self.type, requestID: requestID, actor: actor,
                detail: ["credential_id": Base64URL.encode(passkey.credentialID), "reason": UserCredentialRemoval.reason])
            if try await store.revoke(passkey.credentialID, of: userID, in: appID, recording: row) { removed += 1 }
        }
        return removed
    }
}
