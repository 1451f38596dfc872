import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Hummingbird

extension AccountController {
    // MARK: A signed-in user's own account

    /// `{app_id, refresh_token, current_password, new_password}` → 200
    /// `{"password_changed": true, "sessions_ended": n}`: the user's other
    /// sessions end (where `sessions.revoke_on_password_change` is on), the
    /// one that asked stays.
    func changePassword(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws -> Response {
        try input.rejectUnknown(allowed: ["app_id", "refresh_token", "current_password", "new_password"])
        let current = try input.requiredString("current_password")
        let newPassword = try input.requiredString("new_password")
        let app = try await open(input, &passage, address: nil) { _ in true }
        let holder = try await services.sessionHolders.holder(
            of: try input.string("refresh_token"), adding: nil, in: app.tenant.settings, passage: &passage)
        try await passage.limits([RateLimitPolicy.userFailures.name: holder.userID])
        guard case .verified? = try await app.directory.verify(holder.userID, password: current, in: app.id) else {
            throw refused("bad_password", &passage)
        }
        return try await setPassword(newPassword, of: holder.userID, verifyingEmail: false, keepingSession: holder.sessionID, app, &passage)
    }

    /// `{app_id, refresh_token, new_email}` → 202: a code to the new
    /// address, a notice to the old one. The session's sign-in must be recent.
    func sendEmailChange(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws -> Response {
        try input.rejectUnknown(allowed: ["app_id", "refresh_token", "new_email", SendGuard.tokenField])
        let address = try EmailAddress.parse(try input.string("new_email"), field: "new_email")
        let app = try await open(input, &passage, address: address) { $0.emailChange }
        let holder = try await recentHolder(input, app, &passage)
        try await limitSend(to: address, input, app, &passage)
        guard let account = try await app.directory.account(of: holder.userID, in: app.id) else {
            throw refused("user_deleted", &passage)
        }
        let answer = try await send(
            .emailChange, key: .emailChange(of: account.userID), binding: .emailChangeBinding(of: account.userID, to: address),
            to: address, resendAfterSeconds: app.options.resendAfterSeconds, app, &passage)
        if let old = account.email.flatMap(EmailAddress.init), old != address {
            let notice = try mailer.message(
                .emailChangeNotice, code: "", to: old, options: app.options, app: app.tenant.settings,
                lifetimeSeconds: app.selfService.codeLifetimeSeconds, requestID: passage.row.requestID, userID: account.userID)
            try await services.plugin.outbox.queue(notice, in: app.id, lifetimeSeconds: app.selfService.codeLifetimeSeconds)
        }
        return try await accepted(answer, &passage)
    }

    /// `{app_id, refresh_token, new_email, code}` → 200 `{"email", "email_verified": true}`;
    /// 409 `email_taken` when another account took the address meanwhile.
    func confirmEmailChange(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws
        -> Response
    {
        try input.rejectUnknown(allowed: ["app_id", "refresh_token", "new_email", "code"])
        let address = try EmailAddress.parse(try input.string("new_email"), field: "new_email")
        let code = try Self.code(input)
        let app = try await open(input, &passage, address: address) { $0.emailChange }
        let holder = try await recentHolder(input, app, &passage)
        try await passage.limits([RateLimitPolicy.accountCodeFailures.name: holder.userID])
        let account = try await app.directory.account(of: holder.userID, in: app.id)
        let key = AccountCodeKey.emailChange(of: holder.userID)
        let mac = codes.mac(code, for: AccountCodeKey.emailChangeBinding(of: holder.userID, to: address), in: app.id)
        let user = try await checked(mac, key: key, for: account, keeping: false, app, &passage)
        var row = passage.row
        row.outcome = .success
        let change = change(.emailChanged, of: user.userID, app, passage)
        switch try await app.directory.changeEmail(of: user.userID, to: address.text, in: app.id, recording: row, journaling: change) {
        case .changed: break
        case .noUser: throw refused("user_deleted", &passage)
        case .taken:
            passage.row.reason = "email_taken"
            throw GatewayError(.emailTaken, .conflict, "Another account has this address.")
        }
        try await passage.succeededInTheRoutesStatement()
        try await services.userLifecycle.apply(change)
        return try AdminResponses.json(EmailChanged(email: address.text, email_verified: true))
    }

    struct EmailChanged: Encodable {
        let email: String
        let email_verified: Bool
    }
}
