import Crypto
import Foundation
public import GatewayCore
public import GatewayCourier
import GatewayOutbound
public import GatewayPluginKit
public import Hummingbird
import Logging

/// `credentials.type = "email_code"`: one-time codes sent by email.
///
/// The client asks `POST /v1/email_codes` to send a code, then trades the
/// code for a token. Codes live in the courier (``OneTimeCodes``,
/// ``CodeStore``) as phone codes do: random digits stored as an HMAC, single
/// use, dead after the app's number of wrong tries. Messages go through the
/// outbox: queued by the request's own statement, delivered by a worker on
/// every replica over SMTP, to SES or the app's own endpoint (or, for
/// development apps, to the log). Options
/// (`plugins.email_code`) are in ``EmailCodeOptions`` and docs/plugins.md.
public struct EmailCodePlugin: CredentialPlugin {
    static let type = "email_code"
    public let credentialType = type
    private let codes: OneTimeCodes
    /// Self-service codes have a key of their own.
    private let accountCodes: OneTimeCodes
    private let outboxKey: SymmetricKey
    private let allowsLogSender: Bool
    private let allowsPrivateAddresses: Bool
    private let smtp: SMTPClient
    /// Calls to SES or the app's own endpoint.
    private let outbound: OutboundHTTP
    private let doorbell = OutboxDoorbell()
    private let workerSettings: OutboxWorker.Settings
    private let passwords: (any PasswordDirectoryProvider)?

    /// The purposes the code and outbox keys are derived for.
    public static let keyPurpose = "email-code-hmac"
    public static let accountKeyPurpose = "account-code-hmac"
    public static let outboxKeyPurpose = "email-outbox"

    /// - Parameters:
    ///   - allowsPrivateAddresses: whether a sender may call a private
    ///     address: an SMTP host on any port, an SES endpoint or `http` URL
    ///     (an operator's own relay; tests).
    ///   - extraTrustRoots: a PEM file of CAs trusted for SMTP beside the system's.
    public init(
        codeKey: [UInt8], accountCodeKey: [UInt8], outboxKey: [UInt8], allowsLogSender: Bool = true, allowsPrivateAddresses: Bool = false,
        extraTrustRoots: String? = nil, workerSettings: OutboxWorker.Settings = OutboxWorker.Settings(),
        passwords: (any PasswordDirectoryProvider)? = nil
    ) throws {
        self.codes = OneTimeCodes(key: SymmetricKey(data: codeKey))
        self.accountCodes = OneTimeCodes(key: SymmetricKey(data: accountCodeKey))
        self.outboxKey = SymmetricKey(data: outboxKey)
        self.allowsLogSender = allowsLogSender
        self.allowsPrivateAddresses = allowsPrivateAddresses
        let addresses = OutboundAddressPolicy(allowsPrivateAddresses: allowsPrivateAddresses)
        self.smtp = try SMTPClient(addresses: addresses, extraTrustRoots: extraTrustRoots)
        self.outbound = OutboundHTTP(addresses: addresses)
        self.workerSettings = workerSettings
        self.passwords = passwords
    }

    /// `email.allow_private_addresses` lets SMTP hosts be private addresses
    /// on any port; `email.smtp_ca_file` adds CAs to trust; development
    /// deployments let development apps use the `log` sender.
    public static func make(_ setup: PluginSetup) -> EmailCodePlugin? {
        do {
            return try EmailCodePlugin(
                codeKey: setup.derivedSecret(for: keyPurpose), accountCodeKey: setup.derivedSecret(for: accountKeyPurpose),
                outboxKey: setup.derivedSecret(for: outboxKeyPurpose),
                allowsLogSender: setup.isDevelopment,
                allowsPrivateAddresses: setup.settings.boolean("email.allow_private_addresses", default: false),
                extraTrustRoots: setup.settings.filePath("email.smtp_ca_file"),
                passwords: setup.plugin(offering: (any PasswordDirectoryProvider).self))
        } catch {
            // Only the CA file can fail here, and the settings reader has reported it already.
            return nil
        }
    }

    public static let rateLimitPolicies: [RateLimitPolicy] = [
        .emailFailures, .emailSendsPerAddress, .emailSendsPerIP, .emailSendsPerApp, .emailDailyBudget,
        .accountCodeFailures, .signUpsPerIP, .signUpsPerApp,
    ]

    public var migrations: [Migration] {
        embeddedMigrations.map { Migration(source: "email_code", name: $0.name, sql: $0.text) }
    }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        let options = try EmailCodeOptions(
            options, environment: app.environment, allowsLogSender: allowsLogSender, allowsPrivateAddresses: allowsPrivateAddresses)
        return EmailCodeVerifier(
            options: options, codes: codes, store: services.codes(in: EmailCodeTable.self), databaseRetry: services.databaseRetry,
            directory: passwords?.openDirectory(for: app, services: services, checking: "email-code sign-ins"))
    }

    public func addAdminRoutes(to admin: RouterGroup<GatewayRequestContext>, services: RouteServices) {
        AccountAdminController(services: services, sender: accountCodeSender(services.plugin), doorbell: doorbell).addRoutes(to: admin)
        EmailPreviewController(services: services, outboxKey: outboxKey, doorbell: doorbell).addRoutes(to: admin)
    }

    /// Self-service codes under their own key, mailed through the outbox.
    private func accountCodeSender(_ services: PluginServices) -> AccountCodeSender {
        AccountCodeSender(codes: accountCodes, mailer: AccountMailer(outboxKey: outboxKey), databaseRetry: services.databaseRetry)
    }

    public func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices) {
        let guarding = SendGuard(channel: "email", services: services.plugin)
        EmailCodeController(services: services, codes: codes, outboxKey: outboxKey, doorbell: doorbell, guarding: guarding)
            .addRoutes(to: router)
        AccountController(services: services, sender: accountCodeSender(services.plugin), doorbell: doorbell, guarding: guarding)
            .addRoutes(to: router)
    }

    /// Delivers the outbox's email messages until the gateway stops.
    public func runInBackground(_ services: BackgroundServices) async {
        let delivery = EmailDelivery(
            tenants: services.tenants, outboxKey: outboxKey, smtp: smtp,
            api: EmailAPISender(outbound: outbound, logger: services.plugin.logger), logger: services.plugin.logger)
        await OutboxWorker(
            channel: EmailCodeController.channel, store: services.plugin.outbox, doorbell: doorbell, settings: workerSettings,
            logger: services.plugin.logger, deliver: delivery.deliver, describe: EmailDelivery.row
        ).run()
    }

    public func finish() async {
        smtp.closeAll()
    }

    public var optionSchema: OptionSchema? { EmailCodeOptions.schema }

    /// An app admin may tighten `send_protection`; loosening it is an operator's.
    public func loosening(_ options: JSONValue, from stored: JSONValue, in app: AppSettings) -> String? {
        let path = "plugins.email_code"
        guard let now = SendProtection.within(options, path: path, sms: false),
            let was = SendProtection.within(stored, path: path, sms: false)
        else { return nil }
        return now.loosening(of: was).map { "\(path).send_protection.\($0)" }
    }
}

extension EmailCodePlugin: HearsUserChanges {
    /// A deleted or disabled user's messages still queued are given up
    /// (`email_code.messages_cancelled`, with `detail.reason`): no code reaches
    /// somebody who may no longer sign in. Their live sign-in codes need
    /// nothing: a code signs in only the user its address belongs to now.
    /// Their self-service codes die with any change (deleted, disabled, a
    /// new password, a new address, their sessions ended): a recovery code
    /// sent before is useless after (`account.codes_ended`).
    public func hear(_ change: UserChange, services: PluginServices) async throws -> Int {
        var changed = 0
        let store = services.codes(in: AccountCodeTable.self)
        for key in AccountCodeKey.all(of: change.userID) where try await store.discardCode(for: key, in: change.appID) {
            changed += 1
        }
        if changed > 0 {
            try await services.record(change.row("account.codes_ended", credentialType: Self.type, detail: ["codes": "\(changed)"]))
        }
        guard change.kind == .deleted || change.kind == .disabled else { return changed }
        return changed
            + (try await services.outbox.cancel(
                for: change.userID, in: change.appID,
                recording: change.row("email_code.messages_cancelled", credentialType: Self.type)))
    }
}
