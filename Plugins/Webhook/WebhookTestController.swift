import Foundation
import GatewayCore
import GatewayOutbound
import GatewayPluginKit
import Hummingbird

/// `POST /admin/v1/apps/{app_id}/webhook:test`: sends the app's webhook a
/// signed question, as a login would, and shows the verdict. The body may
/// name `user_id` (default `gateway-test`) and `credentials` (each forwarded
/// field; default `test`). The tenant's own answer is never shown, only how
/// the gateway read it: where private addresses are allowed, a URL could
/// otherwise read an internal service's pages. The call does not move the
/// app's circuit breaker, and is audited as `admin.webhook.tested`. Where the
/// deployment allows private addresses, the answer says only `ok` or
/// `failed`: a reason or a latency would map the operator's network.
struct WebhookTestController: Sendable {
    let tenants: any TenantLookup
    let call: WebhookCall
    let services: PluginServices
    let work: AdminWorkLimit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("apps/{app_id}/webhook:test") { request, context in try await test(request, context) }
    }

    private struct Verdict: Encodable {
        let outcome: String
        let reason: String?
        let latency_ms: Int?
        let identity: WithProfile<Identity>?

        /// What may be shown when the URL may point into the operator's network.
        var withoutDetail: Verdict {
            Verdict(outcome: outcome == "failed" ? "failed" : "ok", reason: nil, latency_ms: nil, identity: nil)
        }
    }

    private struct Identity: Encodable, Sendable {
        let user_id: String
    }

    private func test(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        // No body at all is fine: every field has a default.
        let bodyless = request.headers[.contentType] == nil && (request.headers[.contentLength] ?? "0") == "0"
        let input = bodyless ? JSONInput(members: [:]) : try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["user_id", "credentials"])
        let options = try await options(of: appID)
        let userID = try TokenRequest.validatedUserID(try input.string("user_id") ?? "gateway-test")
        let sent = try input.object("credentials")
        for name in sent?.members.keys.sorted() ?? [] {
            guard let value = try sent?.string(name), value.utf8.count <= 1024 else {
                throw GatewayError.invalidRequest("credentials.\(name) must be a string of at most 1024 bytes.")
            }
        }
        var fields: [String: String] = [:]
        for name in options.forwardFields { fields[name] = try sent?.string(name) ?? "test" }
        try await work.charge(admin, for: appID)

        let started = ContinuousClock.now
        let verdict: Verdict
        do {
            let answer = try await call.ask(
                WebhookCall.Question(appID: appID, userID: userID, fields: fields, requestID: context.requestID), options: options)
            let elapsed = Self.milliseconds(since: started)
            switch answer {
            case .invalid:
                verdict = Verdict(outcome: "invalid", reason: "webhook_rejected", latency_ms: elapsed, identity: nil)
            case .valid(let identity):
                verdict = Verdict(
                    outcome: "valid", reason: nil, latency_ms: elapsed,
                    identity: WithProfile(Identity(user_id: identity.userID), profile: identity.profile))
            }
        } catch {
            verdict = Verdict(outcome: "failed", reason: error.reason.rawValue, latency_ms: Self.milliseconds(since: started), identity: nil)
        }
        let event = AuditEvent(
            appID: appID, event: "admin.webhook.tested", outcome: verdict.outcome == "failed" ? .failure : .success,
            reason: verdict.reason, userID: userID, credentialType: WebhookPlugin.type, requestID: context.requestID,
            actor: admin.id)
        try await services.record(event)
        return try AdminResponses.json(call.outbound.addresses.allowsPrivateAddresses ? verdict.withoutDetail : verdict)
    }

    /// The app's webhook options as its verifier holds them (the secret opened): 404 for no such
    /// app, 409 when it does not accept webhook credentials or its options are refused.
    private func options(of appID: AppID) async throws -> WebhookOptions {
        let tenant: Tenant
        do {
            tenant = try await tenants.tenant(for: appID, within: services.databaseTimeout)
        } catch where error.code == .unknownApp {
            throw AdminErrors.appNotFound(appID)
        }
        guard let verifier = try? tenant.verifier(for: WebhookPlugin.type) as? WebhookVerifier else {
            throw GatewayError(
                .conflict, .conflict, "This app does not accept webhook credentials; set credential_types and plugins.webhook first.")
        }
        return verifier.options
    }

    private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        Int((ContinuousClock.now - start) / .milliseconds(1))
    }
}
