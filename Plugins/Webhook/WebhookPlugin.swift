import CoreMetrics
public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import GatewayOutbound
public import Hummingbird

/// `credentials.type = "webhook"`: the tenant's own user service decides.
///
/// Each login posts the user id and the forwarded credential fields to the
/// app's URL, signed with the app's secret (``WebhookSignature``); the
/// answer `{"valid": true, ...}` becomes the token's identity. With
/// `migrate_on_success: "password"` a user the service vouches for is added
/// to the app's password directory, and checked there from then on.
/// Options (`plugins.webhook`) are in ``WebhookOptions`` and docs/plugins.md; the
/// order of checks is in ``WebhookVerifier``.
public struct WebhookPlugin: CredentialPlugin {
    static let type = "webhook"
    public let credentialType = type
    private let outbound: OutboundHTTP
    private let passwords: (any PasswordDirectoryProvider)?
    private let breaker: CircuitBreaker<AppID>
    private let migrations = UserMigrations()

    /// - Parameters:
    ///   - addresses: where tenants' services may be reached; public
    ///     addresses only unless the operator allows private ones.
    ///   - passwords: the password plugin users move to (`migrate_on_success`); nil where it is not installed.
    ///   - now: the clock of the circuit breakers' cool-downs.
    public init(
        addresses: OutboundAddressPolicy = OutboundAddressPolicy(allowsPrivateAddresses: false),
        passwords: (any PasswordDirectoryProvider)?, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.outbound = OutboundHTTP(addresses: addresses)
        self.passwords = passwords
        self.breaker = CircuitBreaker(now: now) { appID, isOpen in
            Gauge(label: "gateway_webhook_circuit_open", dimensions: [("app_id", appID.description)]).record(isOpen ? 1 : 0)
        }
    }

    /// `webhook.allow_private_addresses` lets tenants' services be private
    /// addresses; users move to the password plugin registered before this one.
    public static func make(_ setup: PluginSetup) -> WebhookPlugin? {
        WebhookPlugin(
            addresses: OutboundAddressPolicy(
                allowsPrivateAddresses: setup.settings.boolean("webhook.allow_private_addresses", default: false)),
            passwords: setup.plugin(offering: (any PasswordDirectoryProvider).self))
    }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        let options = try WebhookOptions(options, environment: app.environment, passwordsInstalled: passwords != nil)
        let directory = try options.migratesToPasswords ? passwords?.directory(for: app, services: services) : nil
        return WebhookVerifier(
            options: options, call: WebhookCall(outbound: outbound, logger: services.logger), breaker: breaker,
            passwords: directory, migrations: migrations, logger: services.logger)
    }

    public func addAdminRoutes(to admin: RouterGroup<GatewayRequestContext>, services: RouteServices) {
        WebhookTestController(
            tenants: services.tenants, call: WebhookCall(outbound: outbound, logger: services.plugin.logger),
            services: services.plugin, work: services.adminWork
        ).addRoutes(to: admin)
    }

    public var optionSchema: OptionSchema? { WebhookOptions.schema }

    /// Returns once every user move under way has finished (tests await it instead of sleeping).
    public func migrationsFinished() async {
        await migrations.idle()
    }

    /// Whether the circuit breaker of `appID`'s webhook is open.
    public func isCircuitOpen(for appID: AppID) -> Bool {
        breaker.isOpen(appID)
    }
}
