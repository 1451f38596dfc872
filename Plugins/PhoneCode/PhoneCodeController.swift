import CoreMetrics
import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Hummingbird
import Logging
import NIOCore

/// `POST /v1/phone_codes` `{app_id, phone_number, captcha_token?}` → 202 `{expires_in, resend_after}`.
///
/// The answer is the same whether or not the number is bound to a user. A
/// number outside the app's allowlist is refused before anything is sent;
/// sends are limited per number and per client IP (`code_sends_number`,
/// `code_sends_ip`: a unit is reserved first and given back when no code goes
/// out) and by the resend delay. An unbound number, when the
/// app does not sign in unbound numbers, gets no SMS (nobody pays to text a
/// number that cannot sign in) and otherwise the same: its code is stored
/// unsent, the same delay and limits apply, and the answer waits as long as
/// a delivery takes (``DeliveryTimes``). Every request is
/// The app's ``SendProtection`` applies: its country policy with the
/// allowlist, its human check after the limits (`sms_daily_budget` among
/// them), and its pumping breaker before a message that costs. Every request is
/// counted under the deployment's `ip` policy, before the app is looked up
/// when it is not in memory, and leaves one `phone_code.sent` audit row (but
/// for repeated `ip` refusals, see ``LimitOutcome/repeatsRefusal``).
struct PhoneCodeController: Sendable {
    static let path = "/v1/phone_codes"
    /// Room for a human check's token (``SendGuard/maximumTokenBytes``) beside the rest.
    static let maximumBodyBytes = 8 * 1024

    let services: RouteServices
    let codes: OneTimeCodes
    let store: any PhoneCodeStore
    let sender: SMSSender
    let deliveryTimes: DeliveryTimes
    /// The app's send protection: the human check and the pumping breaker.
    let guarding: SendGuard

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.path)) { request, context in try await respond(request, context) }
    }

    private func respond(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        // No code went out on a failure (too soon, delivery failed, storage away): its send units are
        // given back. A refusal gave them back already.
        try await services.gate.answer(
            "phone_code.sent", credentialType: "phone_code", cost: .sendsWork, request: request, context: context
        ) { passage in
            let answer = try await send(request, context, &passage)
            // An unbound number is answered alike but audited as not sent. The code has left by now, so the
            // answer does not wait on the row: while PostgreSQL is away it is kept and written later.
            if passage.row.reason == nil { passage.row.outcome = .success }
            try await passage.succeedWithoutWaiting()
            return try AdminResponses.json(answer, status: .accepted)
        }
    }

    private func send(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest
    ) async throws(GatewayError) -> CodeSent {
        let (appID, number, options, captchaToken): (AppID, PhoneNumber, PhoneCodeOptions, String?)
        do {
            let input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
            try input.rejectUnknown(allowed: ["app_id", "phone_number", SendGuard.tokenField])
            captchaToken = try input.string(SendGuard.tokenField)
            guard let id = try input.string("app_id").flatMap(AppID.init) else {
                throw GatewayError.invalidRequest("app_id must be layer:///apps/{staging|production}/<uuid> or a UUID.")
            }
            appID = id
            passage.row.appID = appID
            context.logFacts.appID = appID
            number = try PhoneNumber.parse(try input.string("phone_number"), field: "phone_number")
            passage.row.detail["phone_number"] = number.text

            let tenant = try await passage.app(appID)
            // The app accepts phone codes, with options that are valid (or the 400/403 that says not):
            // the ones its verifier was built from, secrets opened.
            guard let verifier = try tenant.verifier(for: PhoneCodePlugin.type) as? PhoneCodeVerifier else {
                throw GatewayError.internalError
            }
            guard verifier.options.allows(number) else {
                passage.row.detail["country"] = CallingCodes.country(of: number.text)
                throw GatewayError(
                    .phoneNumberNotAllowed, .forbidden, "This app does not send codes to numbers in that country.")
            }
            options = verifier.options
        } catch {
            throw ErrorResponder.translate(error, logger: context.logger)
        }
        let answer = CodeSent(lifetimeSeconds: options.lifetimeSeconds, resendAfterSeconds: options.resendAfterSeconds)

        try await passage.limits([
            RateLimitPolicy.codeSendsPerNumber.name: number.text, RateLimitPolicy.codeSendsPerIP.name: passage.clientIP,
            RateLimitPolicy.smsDailyBudget.name: "*",
        ])
        let prefix = (options.protection.breaker ?? SendProtection.Breaker()).prefix(of: number.text)
        try await guarding.checkHuman(options.protection, token: captchaToken, prefix: prefix, &passage)
        if options.testCode(for: number) != nil {
            passage.row.detail["test_number"] = "true"
            return answer
        }

        let (store, retry) = (store, services.plugin.databaseRetry)
        do {
            // The binding is read again while the database fails over; the code is stored once (a second
            // try after an unknown first would find it and answer 429).
            let binding = try await retry.run { try await store.binding(of: number, in: appID) }
            passage.row.userID = binding?.identity.userID
            // A number that cannot sign in gets all a delivered code gets but the SMS: a stored code
            // (that nobody learns), the resend delay, the send limits and a delivery's time.
            let delivers = binding != nil || options.allowUnboundNumbers
            // Only a message that costs counts against the pumping breaker.
            if delivers { try await guarding.admitDelivery(to: number.text, options.protection, &passage) }
            let code = codes.generate(length: options.codeLength)
            let mac = codes.mac(code, for: number, in: appID)
            if let wait = try await withDatabaseTimeout(retry.attemptTimeout, {
                try await store.storeUnlessTooSoon(
                    code: mac, for: number, in: appID, attempts: options.maximumAttempts,
                    lifetimeSeconds: options.lifetimeSeconds, resendAfterSeconds: options.resendAfterSeconds)
            }) {
                passage.row.reason = "resend_too_soon"
                throw CodeSent.tooSoon(retryAfter: wait)
            }
            guard delivers else {
                passage.row.detail["sent"] = "false"
                passage.row.reason = "unbound_number"
                try? await Task.sleep(for: deliveryTimes.pause(for: appID))
                return answer
            }
            defer {
                Counter(
                    label: "gateway_sms_sends_total",
                    dimensions: [("outcome", passage.row.reason == "sms_delivery_failed" ? "failed" : "sent")]
                ).increment()
            }
            do {
                let started = ContinuousClock.now
                try await sender.send(
                    SMSMessage(appID: appID, phoneNumber: number, code: code, expiresIn: options.lifetimeSeconds),
                    via: options.sender, breaking: options.senderBreaker)
                deliveryTimes.record(ContinuousClock.now - started, for: appID)
            } catch {
                passage.row.reason = "sms_delivery_failed"
                passage.row.detail["delivery"] = error.reason
                _ = try? await withDatabaseTimeout(retry.attemptTimeout) { try await store.discardCode(for: number, in: appID) }
                throw GatewayError(
                    .smsDeliveryFailed, .upstreamFailure, "The code could not be delivered; retry in a moment.")
            }
            return answer
        } catch let error as GatewayError {
            throw error
        } catch {
            context.logger.error("phone code storage failed", metadata: ["error": "\(String(reflecting: error))"])
            throw .unavailable
        }
    }
}
