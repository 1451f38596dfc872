import Crypto
import Foundation
import GatewayCore
import GatewayCourier

/// The messages self-service sends, in English (an app's own wording for
/// them is not configurable yet; the sign-in code's templates are): each
/// with `{app_name}`, and `{code}` and `{minutes}` where it carries a code.
/// A notice carries no code: it tells the owner of an address what someone
/// did with it, so that a request never answers that itself.
enum AccountMail: String, Sendable, CaseIterable {
    case verification
    /// Someone signed up with an address that has an account.
    case signUpNotice
    case recovery
    /// The code that confirms a new address, sent to it.
    case emailChange
    /// Sent to the old address when a change to another is asked for.
    case emailChangeNotice

    var template: EmailTemplates.Template {
        switch self {
        case .verification:
            EmailTemplates.Template(
                subject: "Confirm your {app_name} address: {code}",
                text: "Your code to confirm this address for {app_name} is {code}.\n\nIt expires in {minutes} minutes. If you did not sign up, ignore this message: nothing happens without the code.\n",
                html: nil)
        case .signUpNotice:
            EmailTemplates.Template(
                subject: "Someone tried to sign up to {app_name} with your address",
                text: "Someone tried to create a {app_name} account with this address, which has one already. No second account was made.\n\nIf it was you, sign in, or recover your password if you forgot it. If not, you need do nothing.\n",
                html: nil)
        case .recovery:
            EmailTemplates.Template(
                subject: "Your {app_name} password reset code: {code}",
                text: "Your code to set a new {app_name} password is {code}.\n\nIt expires in {minutes} minutes. If you did not ask for it, ignore this message: your password stays as it is.\n",
                html: nil)
        case .emailChange:
            EmailTemplates.Template(
                subject: "Confirm your new {app_name} address: {code}",
                text: "Your code to make this the address of your {app_name} account is {code}.\n\nIt expires in {minutes} minutes. If you did not ask for it, ignore this message.\n",
                html: nil)
        case .emailChangeNotice:
            EmailTemplates.Template(
                subject: "Your {app_name} address is about to change",
                text: "Someone signed in to your {app_name} account asked to move it to another address. This address stays until the new one is confirmed.\n\nIf it was not you, change your password now.\n",
                html: nil)
        }
    }
}

/// Seals a self-service message for the outbox, as an email code's is
/// (``EmailOutboxPayload``): the email worker delivers it with the app's
/// sender, whatever flow queued it.
struct AccountMailer: Sendable {
    let outboxKey: SymmetricKey

    func message(
        _ mail: AccountMail, code: String, to address: EmailAddress, options: EmailCodeOptions, app: AppSettings,
        lifetimeSeconds: Int, requestID: String, userID: String?
    ) throws -> OutboxMessage {
        let id = UUID()
        let email = EmailMessage(
            mail.template, code: code, appName: app.name, minutes: (lifetimeSeconds + 59) / 60, from: options.from,
            fromName: options.fromName, to: address, id: id, date: Date())
        return OutboxMessage(
            id: id, channel: EmailCodeController.channel,
            payload: try EmailOutboxPayload(email).sealed(with: outboxKey, appID: app.appID, id: id),
            requestID: requestID, userID: userID)
    }
}
