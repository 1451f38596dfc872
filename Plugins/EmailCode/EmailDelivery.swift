import Crypto
import Foundation
import GatewayCore
import GatewayCourier
import GatewayOutbound
import GatewayPluginKit
import Logging

/// Delivers one queued email code, from the outbox: finds the app's sender
/// as its options say now (``EmailCodeOptions/Sender``), opens the sealed
/// message, and hands it over: to the app's SMTP server (``SMTPClient``),
/// to SES or the app's own endpoint (``EmailAPISender``), or, for a
/// development app, to the log.
struct EmailDelivery: Sendable {
    let tenants: any TenantLookup
    let outboxKey: SymmetricKey
    let smtp: SMTPClient
    let api: EmailAPISender
    let logger: Logger

    func deliver(_ message: ClaimedMessage) async -> DeliveryResult {
        let options: EmailCodeOptions
        do {
            let tenant = try await tenants.tenant(for: message.appID, within: .seconds(5))
            guard let verifier = try tenant.verifier(for: EmailCodePlugin.type) as? EmailCodeVerifier else {
                return .permanent(reply: "the app no longer sends email codes")
            }
            options = verifier.options
        } catch {
            return .unreadableSettings(error, of: "email")
        }
        let payload: EmailOutboxPayload
        do {
            payload = try EmailOutboxPayload.open(message.payload, with: outboxKey, appID: message.appID, id: message.id)
        } catch {
            return .permanent(reply: "the queued message cannot be opened (another master key?)")
        }
        switch options.sender {
        case .log:
            // The one place a code may appear in a log line: development apps only.
            logger.notice(
                "email code (log sender, development app)",
                metadata: [
                    "app_id": "\(message.appID)", "to": "\(payload.recipient)", "message_id": "\(message.id)",
                    "text": "\(payload.text.split(whereSeparator: \.isNewline).joined(separator: " "))",
                ])
            return .delivered(reply: "logged")
        case .smtp(let settings):
            let envelope = SMTPEnvelope(sender: payload.sender, recipient: payload.recipient, message: payload.message)
            switch await smtp.send(envelope, with: settings, for: message.appID.uuid.lowercasedText) {
            case .success(let reply): return .delivered(reply: reply.description)
            case .failure(let failure):
                logger.warning(
                    "email delivery failed",
                    metadata: ["app_id": "\(message.appID)", "message_id": "\(message.id)", "reason": "\(failure.description)"])
                return failure.isTransient ? .transient(reply: failure.description) : .permanent(reply: failure.description)
            }
        case .ses(let settings):
            return await api.send(payload, messageID: message.id, appID: message.appID, via: settings)
        case .http(let url, let secret, let timeout):
            return await api.send(payload, messageID: message.id, appID: message.appID, to: url, secret: secret, timeout: timeout)
        }
    }

    /// The audit row of an attempt's end: `email_code.delivered`,
    /// `email_code.delivery_retrying` or `email_code.delivery_failed`, with the
    /// message id, the attempt and the server's reply.
    static func row(_ message: ClaimedMessage, _ finish: OutboxFinish) -> AuditEvent {
        finish.row(
            of: message, events: ("email_code.delivered", "email_code.delivery_retrying", "email_code.delivery_failed"),
            reason: "email_delivery_failed", credentialType: EmailCodePlugin.type)
    }
}
