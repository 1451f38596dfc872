import Foundation
import CoreMetrics
import Crypto
public import GatewayCore
import GatewayCourier
public import GatewayPluginKit
public import GatewayOutbound
public import Hummingbird

/// `credentials.type = "phone_code"`: one-time codes sent by SMS.
///
/// The client asks `POST /v1/phone_codes` to send a code, then trades the
/// code for a token. Codes are random digits, stored only as an HMAC under a
/// key derived from the master key, single use, dead after the app's number
/// of wrong tries. Options (`plugins.phone_code`) are in ``PhoneCodeOptions``
/// and docs/plugins.md.
public struct PhoneCodePlugin: CredentialPlugin {
    static let type = "phone_code"
    public let credentialType = type
    private let codes: OneTimeCodes
    private let allowsLogSender: Bool
    private let senderAddresses: OutboundAddressPolicy
    private let deliveryAttemptTimeout: Duration
    /// The password plugin's users, when it is installed: a number bound to
    /// a user it has disabled signs nobody in.
    private let passwords: (any PasswordDirectoryProvider)?
    private let senderBreaker = CircuitBreaker<AppID>(onChange: { appID, isOpen in
        Gauge(label: "gateway_sms_circuit_open", dimensions: [("app_id", appID.description)]).record(isOpen ? 1 : 0)
    })

    /// - Parameters:
    ///   - codeKey: the key code HMACs are made with (``MasterKey/derivedSecret(for:)``).
    ///   - allowsLogSender: whether development apps may use the `log`
    ///     sender; a production deployment says `false`.
    ///   - senderAddresses: where webhooks and Twilio may be reached; public
    ///     addresses only unless the operator allows private ones.
    ///   - deliveryAttemptTimeout: how long one delivery attempt may take.
    public init(
        codeKey: [UInt8], allowsLogSender: Bool = true,
        senderAddresses: OutboundAddressPolicy = OutboundAddressPolicy(allowsPrivateAddresses: false),
        deliveryAttemptTimeout: Duration = .seconds(5), passwords: (any PasswordDirectoryProvider)? = nil
    ) {
        self.passwords = passwords
        self.codes = OneTimeCodes(key: SymmetricKey(data: codeKey))
        self.allowsLogSender = allowsLogSender
        self.senderAddresses = senderAddresses
        self.deliveryAttemptTimeout = deliveryAttemptTimeout
    }

    /// The purpose string the code key is derived for.
    public static let keyPurpose = "phone-code-hmac"

    /// Development deployments may let development apps use the `log`
    /// sender; `sms.allow_private_addresses` lets senders be private addresses.
    public static func make(_ setup: PluginSetup) -> PhoneCodePlugin? {
        PhoneCodePlugin(
            codeKey: setup.derivedSecret(for: keyPurpose), allowsLogSender: setup.isDevelopment,
            senderAddresses: OutboundAddressPolicy(
                allowsPrivateAddresses: setup.settings.boolean("sms.allow_private_addresses", default: false)),
            passwords: setup.plugin(offering: (any PasswordDirectoryProvider).self))
    }

    public static let rateLimitPolicies: [RateLimitPolicy] = [.phoneFailures, .codeSendsPerNumber, .codeSendsPerIP, .smsDailyBudget]

    public var migrations: [Migration] {
        embeddedMigrations.map { Migration(source: "phone_code", name: $0.name, sql: $0.text) }
    }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        let options = try PhoneCodeOptions(options, environment: app.environment, allowsLogSender: allowsLogSender)
        let directory = passwords?.openDirectory(for: app, services: services, checking: "phone-code sign-ins")
        return PhoneCodeVerifier(
            options: options,
            codes: codes,
            store: services.phoneCodes,
            databaseRetry: services.databaseRetry,
            directory: directory)
    }

    public func addAdminRoutes(to admin: RouterGroup<GatewayRequestContext>, services: RouteServices) {
        PhoneNumberAdminController(
            apps: services.plugin.apps,
            store: services.plugin.phoneCodes,
            sessions: services.plugin.sessions
        ).addRoutes(to: admin)
        SendBreakerAdminController(services: services.plugin).addRoutes(to: admin)
    }

    public func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices) {
        PhoneCodeController(
            services: services, codes: codes,
            store: services.plugin.phoneCodes,
            sender: SMSSender(
                addresses: senderAddresses, breaker: senderBreaker, attemptTimeout: deliveryAttemptTimeout,
                logger: services.plugin.logger),
            deliveryTimes: DeliveryTimes(),
            guarding: SendGuard(channel: "sms", services: services.plugin)
        ).addRoutes(to: router)
    }

    public var optionSchema: OptionSchema? { PhoneCodeOptions.schema }

    /// An app admin may tighten `send_protection`; loosening it is an operator's.
    public func loosening(_ options: JSONValue, from stored: JSONValue, in app: AppSettings) -> String? {
        let path = "plugins.phone_code"
        guard let now = SendProtection.within(options, path: path, sms: true),
            let was = SendProtection.within(stored, path: path, sms: true)
        else { return nil }
        return now.loosening(of: was).map { "\(path).send_protection.\($0)" }
    }
}

extension PhoneCodePlugin: HearsUserChanges {
    /// A deletion unbinds each of the user's numbers, each with an
    /// `admin.phone_number.unbound` row like the admin route's, its
    /// `detail.reason` `user_deleted`: a code sent to one signs nobody in,
    /// and a user created again under the same id is bound to none. Other
    /// changes keep the numbers: a disabled user's are refused at sign-in
    /// (``PhoneCodeVerifier``), and come back with the user.
    public func hear(_ change: UserChange, services: PluginServices) async throws -> Int {
        guard change.kind == .deleted else { return 0 }
        let store = services.phoneCodes
        var removed = 0
        for binding in try await store.bindings(of: change.userID, in: change.appID) {
            guard let number = PhoneNumber(binding.phoneNumber) else { continue }
            let row = change.row("admin.phone_number.unbound", credentialType: Self.type, detail: ["phone_number": number.text])
            if try await store.unbind(number, in: change.appID, boundTo: change.userID, recording: row) { removed += 1 }
        }
        return removed
    }
}
