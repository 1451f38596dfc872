import CoreMetrics
import Crypto
import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import HTTPTypes
import Hummingbird
import Logging

/// `POST /v1/email_codes` `{app_id, email, locale?, captcha_token?}` → 202 `{expires_in, resend_after}`.
///
/// The answer is the same, in status, body, headers and time, whether or
/// not the address belongs to a user: the message is never sent inside the
/// request. A code and its message are stored by one statement (the code's
/// row and its outbox row, ``CodeStore``), and a worker delivers the message
/// after the answer (``EmailCodePlugin/runInBackground(_:)``). An address
/// that signs in nobody gets the same statement with no message: an unsent
/// code, the same resend delay and the same limits. Sends are limited per
/// address, per client IP and per app (`email_sends_address`,
/// `email_sends_ip`, `email_sends_app`, `email_daily_budget`), the app's
/// human check follows them (``SendGuard``), and every request leaves one
/// `email_code.sent` audit row.
struct EmailCodeController: Sendable {
    static let path = "/v1/email_codes"
    /// Room for a human check's token (``SendGuard/maximumTokenBytes``) beside the rest.
    static let maximumBodyBytes = 8 * 1024
    static let channel = "email"

    let services: RouteServices
    let codes: OneTimeCodes
    let outboxKey: SymmetricKey
    let doorbell: OutboxDoorbell
    let guarding: SendGuard

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.path)) { request, context in try await respond(request, context) }
    }

    private func respond(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        try await services.gate.answer(
            "email_code.sent", credentialType: EmailCodePlugin.type, cost: .sendsWork, request: request, context: context
        ) { passage in
            let answer = try await send(request, context, &passage)
            if passage.row.reason == nil { passage.row.outcome = .success }
            // The code and its message are committed; the row of the request may follow.
            try await passage.succeedWithoutWaiting()
            doorbell.ring()
            return try AdminResponses.json(answer, status: .accepted)
        }
    }

    private func send(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest
    ) async throws(GatewayError) -> CodeSent {
        let (tenant, address, locale, verifier, captchaToken): (Tenant, EmailAddress, String?, EmailCodeVerifier, String?)
        do {
            let input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
            try input.rejectUnknown(allowed: ["app_id", "email", "locale", SendGuard.tokenField])
            captchaToken = try input.string(SendGuard.tokenField)
            guard let appID = try input.string("app_id").flatMap(AppID.init) else {
                throw GatewayError.invalidRequest("app_id must be layer:///apps/{staging|production}/<uuid> or a UUID.")
            }
            passage.row.appID = appID
            context.logFacts.appID = appID
            address = try EmailAddress.parse(try input.string("email"), field: "email")
            passage.row.detail["email"] = address.text
            locale = try input.string("locale")
            if let locale, !EmailTemplates.isLocale(locale.lowercased()) {
                throw GatewayError.invalidRequest("locale must be a language tag like en or pt-BR.")
            }
            tenant = try await passage.app(appID)
            guard let built = try tenant.verifier(for: EmailCodePlugin.type) as? EmailCodeVerifier else {
                throw GatewayError.internalError
            }
            verifier = built
        } catch {
            throw ErrorResponder.translate(error, logger: context.logger)
        }
        let options = verifier.options
        let appID = tenant.settings.appID
        let answer = CodeSent(lifetimeSeconds: options.lifetimeSeconds, resendAfterSeconds: options.resendAfterSeconds)
        try await passage.limits([
            RateLimitPolicy.emailSendsPerAddress.name: address.text, RateLimitPolicy.emailSendsPerIP.name: passage.clientIP,
            RateLimitPolicy.emailSendsPerApp.name: "*", RateLimitPolicy.emailDailyBudget.name: "*",
        ])
        try await guarding.checkHuman(options.protection, token: captchaToken, prefix: nil, &passage)

        let retry = services.plugin.databaseRetry
        do {
            let owner = try await verifier.owner(of: address, in: appID)
            if case .verified(let identity)? = owner { passage.row.userID = identity.userID }
            let code = codes.generate(length: options.codeLength)
            // Only an address that signs somebody in is written to; a disabled user's too (they learn nothing
            // new by it, and the code is refused at sign-in).
            let message: OutboxMessage?
            if owner != nil {
                let id = UUID()
                let template = options.templates.template(
                    for: options.templates.locale(requested: locale, acceptLanguage: request.headers[.acceptLanguage]))
                let email = EmailMessage(
                    template, code: code, appName: tenant.settings.name, minutes: (options.lifetimeSeconds + 59) / 60,
                    from: options.from, fromName: options.fromName, to: address, id: id, date: Date())
                message = OutboxMessage(
                    id: id, channel: Self.channel,
                    payload: try EmailOutboxPayload(email).sealed(with: outboxKey, appID: appID, id: id),
                    requestID: passage.row.requestID, userID: passage.row.userID)
                passage.row.detail["message_id"] = id.uuidString.lowercased()
            } else {
                message = nil
                passage.row.detail["sent"] = "false"
                passage.row.reason = "unknown_address"
            }
            let store = verifier.store
            let mac = codes.mac(code, for: address, in: appID)
            if let wait = try await withDatabaseTimeout(retry.attemptTimeout, {
                try await store.storeUnlessTooSoon(
                    code: mac, for: address, in: appID, attempts: options.maximumAttempts,
                    lifetimeSeconds: options.lifetimeSeconds, resendAfterSeconds: options.resendAfterSeconds, queueing: message)
            }) {
                passage.row.reason = "resend_too_soon"
                passage.row.detail["message_id"] = nil
                throw CodeSent.tooSoon(retryAfter: wait)
            }
            Counter(label: "gateway_email_codes_total", dimensions: [("outcome", message == nil ? "unsent" : "queued")]).increment()
            return answer
        } catch let error as GatewayError {
            throw error
        } catch {
            context.logger.error("email code storage failed", metadata: ["error": "\(String(reflecting: error))"])
            throw .unavailable
        }
    }
}
