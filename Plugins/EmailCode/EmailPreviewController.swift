import Crypto
import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Hummingbird

/// What an app's code email looks like, before a user gets one:
///
/// - `POST /admin/v1/apps/{app_id}/email_code:preview` `{locale?}`: the
///   message the app's options make for that locale (its default when
///   absent), with a sample code: `{locale, from, subject, text, html}`.
/// - `POST /admin/v1/apps/{app_id}/email_code:test_message` `{to, locale?}`:
///   that message queued to `to` through the outbox and the app's sender,
///   202 `{message_id}`, audited as `admin.email.test_queued`. Its code is
///   the sample's and signs nobody in: no code row is written. Each one is
///   costly work (``AdminWorkLimit``): an admin token cannot fill the shared
///   outbox with test messages.
///
/// 409 `email_code_off` where the app has no email_code options.
struct EmailPreviewController: Sendable {
    let services: RouteServices
    let outboxKey: SymmetricKey
    let doorbell: OutboxDoorbell

    /// The sample code, cut to the app's code length.
    static func sampleCode(length: Int) -> String { String("1234567890".prefix(length)) }

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("apps/{app_id}/email_code:preview") { request, context in try await preview(request, context) }
        group.post("apps/{app_id}/email_code:test_message") { request, context in try await testMessage(request, context) }
    }

    private func preview(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["locale"])
        let (tenant, options) = try await Self.options(of: appID, services)
        let locale = try Self.locale(input, options)
        let message = Self.message(options, locale: locale, appName: tenant.settings.name, to: options.from, id: UUID())
        return try AdminResponses.json(
            ["locale": locale, "from": options.from.mailbox, "subject": message.subject, "text": message.text, "html": message.html])
    }

    private func testMessage(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["to", "locale"])
        let to = try EmailAddress.parse(try input.string("to"), field: "to")
        try await services.adminWork.charge(admin, for: appID)
        let (tenant, options) = try await Self.options(of: appID, services)
        let locale = try Self.locale(input, options)
        let id = UUID()
        let message = Self.message(options, locale: locale, appName: tenant.settings.name, to: to, id: id)
        let queued = OutboxMessage(
            id: id, channel: EmailCodeController.channel,
            payload: try EmailOutboxPayload(message).sealed(with: outboxKey, appID: appID, id: id), requestID: context.requestID)
        try await services.plugin.outbox.queue(queued, in: appID, lifetimeSeconds: options.lifetimeSeconds)
        try await services.plugin.record(
            AuditEvent(
                appID: appID, event: "admin.email.test_queued", outcome: .success, credentialType: EmailCodePlugin.type,
                requestID: context.requestID, actor: admin.id,
                detail: ["email": to.text, "message_id": id.uuidString.lowercased(), "locale": locale]))
        doorbell.ring()
        return try AdminResponses.json(["message_id": id.uuidString.lowercased()], status: .accepted)
    }

    private static func options(of appID: AppID, _ services: RouteServices) async throws -> (Tenant, EmailCodeOptions) {
        let tenant = try await services.tenants.tenant(for: appID, within: services.plugin.databaseTimeout)
        guard tenant.settings.plugins[EmailCodePlugin.type] != nil,
            let verifier = try? tenant.verifier(for: EmailCodePlugin.type) as? EmailCodeVerifier
        else {
            throw GatewayError(.emailCodeOff, .conflict, "This app has no email_code options to make a message from.")
        }
        return (tenant, verifier.options)
    }

    private static func locale(_ input: JSONInput, _ options: EmailCodeOptions) throws(GatewayError) -> String {
        guard let asked = try input.string("locale") else { return options.templates.defaultLocale }
        guard options.templates.has(asked) else {
            throw .invalidRequest("locale: this app has no template for '\(asked)' (it has: \(options.templates.locales.joined(separator: ", "))).")
        }
        return asked
    }

    private static func message(_ options: EmailCodeOptions, locale: String, appName: String, to: EmailAddress, id: UUID) -> EmailMessage {
        EmailMessage(
            options.templates.template(for: locale), code: sampleCode(length: options.codeLength), appName: appName,
            minutes: (options.lifetimeSeconds + 59) / 60, from: options.from, fromName: options.fromName, to: to, id: id, date: Date())
    }
}

extension GatewayError.Code {
    /// An email preview or test message asked of an app without email_code options.
    static let emailCodeOff = GatewayError.Code(rawValue: "email_code_off")
}
