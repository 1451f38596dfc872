import CoreMetrics
import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayPostgres
import Hummingbird
import Logging
import NIOCore

/// `POST /v1/phone_codes` `{app_id, phone_number}` → 202 `{expires_in, resend_after}`.
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
/// counted under the deployment's `ip` policy, before the app is looked up
/// when it is not in memory, and leaves one `phone_code.sent` audit row (but
/// for repeated `ip` refusals, see ``RateLimiter/Outcome/repeatsRefusal``).
struct PhoneCodeController: Sendable {
    static let path = "/v1/phone_codes"
    static let maximumBodyBytes = 4 * 1024

    let services: RouteServices
    let codes: PhoneCodes
    let repository: PhoneCodeRepository
    let sender: SMSSender
    let deliveryTimes: DeliveryTimes

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.path)) { request, context in try await respond(request, context) }
    }

    private func respond(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        var event = AuditEvent(
            appID: nil, event: "phone_code.sent", outcome: .failure, credentialType: "phone_code",
            requestID: context.requestID)
        event.clientIP = context.clientIP
        event.userAgent = request.headers[.userAgent]
        let answer: Answer
        var limits = RateLimiter.Outcome.unlimited
        do {
            answer = try await send(request, context, &event, &limits)
        } catch {
            if event.reason == nil { event.reason = error.code.rawValue }
            // No code went out (too soon, delivery failed, storage away): its send units are given
            // back. A refusal gave them back already.
            if limits.refusal == nil { try? await services.rateLimiter.release(limits) }
            if !limits.repeatsRefusal { await services.ledger.recordEventually(event) }
            // A limit's refusal says which policy and when it lifts.
            if limits.refusal != nil { throw HeaderedError(error, headers: limits.headers) }
            throw error
        }
        // An unbound number is answered alike but audited as not sent. The code has left by now, so the
        // answer does not wait on the row: while PostgreSQL is away it is kept and written later.
        if event.reason == nil { event.outcome = .success }
        await services.ledger.recordEventually(event)
        return try AdminResponses.json(answer, status: .accepted)
    }

    struct Answer: Encodable {
        let expires_in: Int
        let resend_after: Int
    }

    private func send(
        _ request: Request, _ context: GatewayRequestContext, _ event: inout AuditEvent,
        _ limits: inout RateLimiter.Outcome
    ) async throws(GatewayError) -> Answer {
        let clientIP = context.clientIP ?? "unknown"
        var clientCounted = false
        let appID: AppID
        let number: PhoneNumber
        let tenant: Tenant
        let options: PhoneCodeOptions
        do throws(GatewayError) {
            let input: JSONInput
            do {
                input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
            } catch {
                throw ErrorResponder.translate(error, logger: context.logger)
            }
            try input.rejectUnknown(allowed: ["app_id", "phone_number"])
            guard let id = try input.string("app_id").flatMap(AppID.init) else {
                throw .invalidRequest("app_id must be layer:///apps/{staging|production}/<uuid> or a UUID.")
            }
            appID = id
            event.appID = appID
            context.logFacts.appID = appID
            number = try PhoneNumber.parse(try input.string("phone_number"), field: "phone_number")
            event.detail["phone_number"] = number.text

            if services.tenants.cachedTenant(for: appID) == nil {
                // Not in memory: made-up ids cost a lookup, so they pay the client's budget first.
                clientCounted = true
                try await countClient(clientIP, &event, &limits)
            }
            tenant = try await services.tenants.tenant(for: appID, within: services.plugin.databaseTimeout)
            guard tenant.settings.isEnabled else { throw GatewayError(.appDisabled, .forbidden, "This app is disabled.") }
            // The app accepts phone codes, with options that are valid (or the 400/403 that says not):
            // the ones its verifier was built from, secrets opened.
            guard let verifier = try tenant.verifier(for: PhoneCodePlugin.type) as? PhoneCodeVerifier else {
                throw .internalError
            }
            options = verifier.options
            guard options.allows(number) else {
                throw GatewayError(
                    .phoneNumberNotAllowed, .forbidden, "This app does not send codes to numbers in that country.")
            }
        } catch where error.code != .rateLimited && !clientCounted {
            // Answered before the app's limits apply: the client's budget still pays for it.
            try await countClient(clientIP, &event, &limits)
            throw error
        }
        let answer = Answer(expires_in: options.lifetimeSeconds, resend_after: options.resendAfterSeconds)

        do {
            try await services.rateLimiter.check(
                [
                    RateLimitPolicy.clientIP.name: clientIP, RateLimitPolicy.codeSendsPerNumber.name: number.text,
                    RateLimitPolicy.codeSendsPerIP.name: clientIP,
                ],
                app: tenant.settings, clientCounted: clientCounted, into: &limits, noting: &event)
        } catch let error as GatewayError {
            throw error
        } catch {
            throw .unavailable
        }
        if options.testCode(for: number) != nil {
            event.detail["test_number"] = "true"
            return answer
        }

        do {
            let binding = try await repository.binding(of: number, in: appID)
            event.userID = binding?.identity.userID
            // A number that cannot sign in gets all a delivered code gets but the SMS: a stored code
            // (that nobody learns), the resend delay, the send limits and a delivery's time.
            let delivers = binding != nil || options.allowUnboundNumbers
            let code = codes.generate(length: options.codeLength)
            if let wait = try await repository.storeUnlessTooSoon(
                code: codes.mac(code, for: number, in: appID), for: number, in: appID, attempts: options.maximumAttempts,
                lifetimeSeconds: options.lifetimeSeconds, resendAfterSeconds: options.resendAfterSeconds)
            {
                event.reason = "resend_too_soon"
                throw GatewayError(
                    .rateLimited, .tooManyRequests, "A code was sent just now; retry after \(wait) seconds.",
                    retryAfterSeconds: wait)
            }
            guard delivers else {
                event.detail["sent"] = "false"
                event.reason = "unbound_number"
                try? await Task.sleep(for: deliveryTimes.pause(for: appID))
                return answer
            }
            defer {
                Counter(
                    label: "gateway_sms_sends_total",
                    dimensions: [("outcome", event.reason == "sms_delivery_failed" ? "failed" : "sent")]
                ).increment()
            }
            do {
                let started = ContinuousClock.now
                try await sender.send(
                    SMSMessage(appID: appID, phoneNumber: number, code: code, expiresIn: options.lifetimeSeconds),
                    via: options.sender)
                deliveryTimes.record(ContinuousClock.now - started, for: appID)
            } catch {
                event.reason = "sms_delivery_failed"
                event.detail["delivery"] = error.reason
                try? await repository.discardCode(for: number, in: appID)
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

    /// ``RateLimiter/countClient(_:into:noting:)``, a database failure answered 503.
    private func countClient(
        _ clientIP: String, _ event: inout AuditEvent, _ limits: inout RateLimiter.Outcome
    ) async throws(GatewayError) {
        do {
            try await services.rateLimiter.countClient(clientIP, into: &limits, noting: &event)
        } catch let error as GatewayError {
            throw error
        } catch {
            throw .unavailable
        }
    }
}
