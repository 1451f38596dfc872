import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Hummingbird

/// Self-service accounts (`/v1/accounts/...`, the app's `self_service`
/// settings): sign-up, address verification, password recovery, a new
/// password, a new address and deletion, by the user with no operator in
/// the loop. Accounts are the app's password users (through the
/// ``PasswordDirectory`` seam); codes are this plugin's (``AccountCodeKey``
/// in `account_codes`), mailed through the outbox by the app's email-code
/// sender.
///
/// A route that takes an address answers the same, in status, body and
/// headers, whether it belongs to an account or not, and does the same
/// work: the password is hashed either way, a code is stored either way
/// (unsent, under the address, where nobody has it), and no mail is sent
/// inside the request. Where someone signs up with an address that has an
/// account, its owner is told instead.
struct AccountController: Sendable {
    static let maximumBodyBytes = 8 * 1024
    static let profileFields = ["first_name", "last_name", "display_name"]

    let services: RouteServices
    let sender: AccountCodeSender
    let doorbell: OutboxDoorbell
    let guarding: SendGuard
    var codes: OneTimeCodes { sender.codes }
    var mailer: AccountMailer { sender.mailer }

    func addRoutes(to router: Router<GatewayRequestContext>) {
        route(router, "sign_up", "account.sign_up", .sendsWork, signUp)
        route(router, "verification", "account.verification_sent", .sendsWork, sendVerification)
        route(router, "verification/confirm", "account.email_verified", .limitsFirst, confirmVerification)
        route(router, "password_reset", "account.recovery_sent", .sendsWork, sendRecovery)
        route(router, "password_reset/confirm", "account.password_reset", .limitsFirst, recover)
        route(router, "password", "account.password_changed", .limitsFirst, changePassword)
        route(router, "email", "account.email_change_sent", .sendsWork, sendEmailChange)
        route(router, "email/confirm", "account.email_changed", .limitsFirst, confirmEmailChange)
    }

    typealias Handler = @Sendable (Request, JSONInput, inout PublicRequest) async throws -> Response

    func route(
        _ router: Router<GatewayRequestContext>, _ path: String, _ event: String, _ cost: PublicRequest.Cost,
        _ handler: @escaping Handler
    ) {
        router.post(RouterPath(stringLiteral: "/v1/accounts/" + path)) { request, context in
            try await services.gate.answer(
                event, credentialType: EmailCodePlugin.type, cost: cost, request: request, context: context
            ) { passage in
                let input: JSONInput
                do {
                    input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
                } catch {
                    throw ErrorResponder.translate(error, logger: context.logger)
                }
                return try await handler(request, input, &passage)
            }
        }
    }

    // MARK: Steps every route shares

    /// The app `app_id` names, where it offers the flow `offers` picks out (403 `self_service_off` otherwise).
    func open(
        _ input: JSONInput, _ passage: inout PublicRequest, address: EmailAddress?,
        offers: (SelfServiceSettings) -> Bool
    ) async throws -> AccountApp {
        guard let appID = try input.string("app_id").flatMap(AppID.init) else {
            throw GatewayError.invalidRequest("app_id must be layer:///apps/{staging|production}/<uuid> or a UUID.")
        }
        passage.row.appID = appID
        if let address { passage.row.detail["email"] = address.text }
        let tenant = try await passage.app(appID)
        guard let selfService = tenant.settings.selfService, offers(selfService) else {
            throw GatewayError.selfServiceOff
        }
        return try AccountApp(tenant, selfService: selfService, services: services.plugin)
    }

    func sendLimits(_ address: EmailAddress, _ passage: PublicRequest) -> [String: String] {
        [
            RateLimitPolicy.emailSendsPerAddress.name: address.text, RateLimitPolicy.emailSendsPerIP.name: passage.clientIP,
            RateLimitPolicy.emailSendsPerApp.name: "*", RateLimitPolicy.emailDailyBudget.name: "*",
        ]
    }

    /// A sending route's limits (``sendLimits(_:_:)`` unless it names its
    /// own), then the app's human check on the body's `captcha_token`.
    func limitSend(
        to address: EmailAddress, _ input: JSONInput, _ app: AccountApp, _ passage: inout PublicRequest,
        limits: [String: String]? = nil
    ) async throws {
        try await passage.limits(limits ?? sendLimits(address, passage))
        try await guarding.checkHuman(app.options.protection, token: try input.string(SendGuard.tokenField), prefix: nil, &passage)
    }

    /// Stores a new code under `key` (bound to `binding` where given) and,
    /// with `mail`, queues its message in the same statement; with none, the
    /// code is stored unsent, so that the work is that of a sent one. A route
    /// that takes an address spaces its sends by the per-address limit alone
    /// (`resendAfterSeconds` 0): a resend delay kept per account would answer
    /// a second request for a registered address 429 where a new address's
    /// first account code was just made, and tell the two apart. A route of a
    /// signed-in user passes the app's resend delay: 429 with `Retry-After` inside it.
    func send(
        _ mail: AccountMail?, key: AccountCodeKey, binding: AccountCodeKey? = nil, to address: EmailAddress,
        resendAfterSeconds: Int = 0, _ app: AccountApp, _ passage: inout PublicRequest
    ) async throws -> CodeSent {
        passage.row.detail["mail"] = mail?.rawValue ?? "none"
        let outcome = try await sender.send(
            mail, key: key, binding: binding, to: address, resendAfterSeconds: resendAfterSeconds, app: app,
            requestID: passage.row.requestID, userID: passage.row.userID)
        switch outcome {
        case .sent(let answer, let messageID):
            passage.row.detail["message_id"] = messageID?.uuidString.lowercased()
            return answer
        case .tooSoon(let wait):
            passage.row.reason = "resend_too_soon"
            throw CodeSent.tooSoon(retryAfter: wait)
        }
    }

    /// The 202 of a send, its row written without waiting, the worker woken.
    func accepted(_ answer: CodeSent, _ passage: inout PublicRequest) async throws -> Response {
        if passage.row.reason == nil { passage.row.outcome = .success }
        try await passage.succeedWithoutWaiting()
        doorbell.ring()
        return try AdminResponses.json(answer, status: .accepted)
    }

    /// The account a right code is for; 401 for a wrong, spent or expired
    /// code, or an address that is nobody's (the same answer). With
    /// `keeping`, a right code stays live for the check that spends it.
    func checked(
        _ mac: [UInt8], key: AccountCodeKey, for account: Account?, keeping: Bool, _ app: AccountApp, _ passage: inout PublicRequest
    ) async throws -> Account {
        let store = app.store
        let retry = services.plugin.databaseRetry
        let check = try await withDatabaseTimeout(retry.attemptTimeout) {
            try await store.check(mac, for: key, in: app.id, keepingOnMatch: keeping)
        }
        if let account { passage.row.userID = account.userID }
        guard let account else { throw refused("unknown_address", &passage) }
        if let reason = check.refusalReason { throw refused(reason, &passage) }
        return account
    }

    /// ``checked(_:key:for:keeping:_:_:)`` for a code spent at once.
    func spent(
        _ code: String, key: AccountCodeKey, for account: Account?, _ app: AccountApp, _ passage: inout PublicRequest
    ) async throws -> Account {
        try await checked(codes.mac(code, for: key, in: app.id), key: key, for: account, keeping: false, app, &passage)
    }

    /// The live session's holder, whose sign-in must be recent.
    func recentHolder(_ input: JSONInput, _ app: AccountApp, _ passage: inout PublicRequest) async throws -> SessionHolder {
        let holder = try await services.sessionHolders.holder(
            of: try input.string("refresh_token"), adding: nil, in: app.tenant.settings, passage: &passage)
        guard holder.signedInWithin(seconds: app.selfService.recentSignInSeconds) else {
            passage.row.reason = "sign_in_not_recent"
            throw GatewayError.recentSignInRequired(within: app.selfService.recentSignInSeconds)
        }
        return holder
    }

    /// 401 `invalid_credentials`, the row saying why.
    func refused(_ reason: String, _ passage: inout PublicRequest) -> GatewayError {
        passage.row.reason = reason
        return GatewayError.invalidCredentials
    }

    func change(_ kind: UserChange.Kind, of userID: String, _ app: AccountApp, _ passage: PublicRequest) -> UserChange {
        UserChange(kind, of: userID, in: app.id, requestID: passage.row.requestID, actor: nil)
    }

    static func code(_ input: JSONInput) throws(GatewayError) -> String {
        guard let code = try input.string("code"), OneTimeCodes.isWellFormed(code) else {
            throw GatewayError.invalidRequest("code must be the digits of the code.")
        }
        return code
    }
}
