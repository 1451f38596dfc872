import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit

/// What a self-service route, public or admin, needs of its app: its
/// settings, its email options, its password directory and the store of
/// its account codes.
struct AccountApp: Sendable {
    let tenant: Tenant
    let selfService: SelfServiceSettings
    let options: EmailCodeOptions
    let directory: any PasswordDirectory
    let store: any CodeStore<AccountCodeKey>
    var id: AppID { tenant.settings.appID }

    /// The parts of `tenant`; 503 where its email-code verifier has no
    /// password directory (the settings check requires both plugins, so
    /// only a gateway built without the password plugin meets it).
    init(_ tenant: Tenant, selfService: SelfServiceSettings, services: PluginServices) throws {
        guard let verifier = try tenant.verifier(for: EmailCodePlugin.type) as? EmailCodeVerifier, let directory = verifier.directory
        else { throw GatewayError.unavailable }
        self.tenant = tenant
        self.selfService = selfService
        self.options = verifier.options
        self.directory = directory
        self.store = services.codes(in: AccountCodeTable.self)
    }
}

/// Makes a self-service code, stores its HMAC under its key (the one live
/// code of that key) and, with a message, queues the message in the outbox
/// in the same statement.
struct AccountCodeSender: Sendable {
    let codes: OneTimeCodes
    let mailer: AccountMailer
    let databaseRetry: DatabaseRetry

    enum Outcome: Sendable {
        /// Stored; the message's id, where one was queued.
        case sent(CodeSent, messageID: UUID?)
        /// Within the resend delay: nothing stored, `retryAfter` seconds to wait.
        case tooSoon(retryAfter: Int)
    }

    /// Sends `mail` with a new code to `address` (with none, the code is
    /// stored unsent: the work of a sent one, for an address nobody has).
    /// The code is bound to `binding` where given, else to `key`.
    func send(
        _ mail: AccountMail?, key: AccountCodeKey, binding: AccountCodeKey?, to address: EmailAddress, resendAfterSeconds: Int,
        app: AccountApp, requestID: String, userID: String?
    ) async throws -> Outcome {
        let settings = app.selfService
        let code = codes.generate(length: app.options.codeLength)
        let message = try mail.map { mail in
            try mailer.message(
                mail, code: code, to: address, options: app.options, app: app.tenant.settings,
                lifetimeSeconds: settings.codeLifetimeSeconds, requestID: requestID, userID: userID)
        }
        let store = app.store
        let mac = codes.mac(code, for: binding ?? key, in: app.id)
        if let wait = try await withDatabaseTimeout(databaseRetry.attemptTimeout, {
            try await store.storeUnlessTooSoon(
                code: mac, for: key, in: app.id, attempts: settings.maximumAttempts, lifetimeSeconds: settings.codeLifetimeSeconds,
                resendAfterSeconds: resendAfterSeconds, queueing: message)
        }) {
            return .tooSoon(retryAfter: wait)
        }
        return .sent(CodeSent(lifetimeSeconds: settings.codeLifetimeSeconds, resendAfterSeconds: resendAfterSeconds), messageID: message?.id)
    }
}
