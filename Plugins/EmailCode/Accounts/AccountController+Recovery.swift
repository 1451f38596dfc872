import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Hummingbird

extension AccountController {
    // MARK: Recovery

    /// `{app_id, email}` → 202: a recovery code, if the address is an enabled account's.
    func sendRecovery(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws -> Response {
        try input.rejectUnknown(allowed: ["app_id", "email", SendGuard.tokenField])
        let address = try EmailAddress.parse(try input.string("email"), field: "email")
        let app = try await open(input, &passage, address: address) { $0.passwordReset }
        try await limitSend(to: address, input, app, &passage)
        let account = try await app.directory.account(ofEmail: address.text, in: app.id)
        let answer: CodeSent
        if let account, !account.disabled {
            passage.row.userID = account.userID
            answer = try await send(.recovery, key: .recovery(of: account.userID), to: address, app, &passage)
        } else {
            answer = try await send(nil, key: .recoveryOfNobody(at: address), to: address, app, &passage)
        }
        return try await accepted(answer, &passage)
    }

    /// `{app_id, email, code, new_password, second_factor?: {type, code}}` →
    /// 200 `{"password_changed": true, "sessions_ended": n}`. The new
    /// password's rules are checked first (400); then the code, which is kept
    /// while, for an account with a second factor, a TOTP or recovery code of
    /// it is asked (403 `mfa_required` without one); only then is it spent,
    /// once on every replica, and the password hashed. The new password ends the user's sessions (where
    /// `sessions.revoke_on_password_change` is on, the default), tickets and
    /// other codes, and marks the address verified.
    func recover(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws -> Response {
        try input.rejectUnknown(allowed: ["app_id", "email", "code", "new_password", "second_factor"])
        let address = try EmailAddress.parse(try input.string("email"), field: "email")
        let code = try Self.code(input)
        let newPassword = try input.requiredString("new_password")
        let secondFactor = try input.object("second_factor")
        let app = try await open(input, &passage, address: address) { $0.passwordReset }
        try app.directory.checkNewPassword(newPassword, field: "new_password", in: app.id)
        try await passage.limits([RateLimitPolicy.accountCodeFailures.name: address.text])
        let found = try await app.directory.account(ofEmail: address.text, in: app.id)
        let account = found?.disabled == false ? found : nil
        let key = account.map { AccountCodeKey.recovery(of: $0.userID) } ?? .recoveryOfNobody(at: address)
        let mac = codes.mac(code, for: key, in: app.id)
        let user = try await checked(mac, key: key, for: account, keeping: true, app, &passage)
        if try await services.secondFactors.hasConfirmedFactor(user.userID, in: app.tenant.settings) {
            guard let secondFactor else {
                passage.row.reason = "mfa_required"
                throw GatewayError(
                    .secondFactorRequired, .forbidden,
                    "This account has a second factor: send second_factor {\"type\": \"totp\" | \"recovery_code\", \"code\"} too.")
            }
            try secondFactor.rejectUnknown(allowed: ["type", "code"])
            let kind = try secondFactor.requiredString("type")
            guard ["totp", "recovery_code"].contains(kind) else {
                throw GatewayError.invalidRequest("second_factor.type must be totp or recovery_code.")
            }
            try await passage.limits([RateLimitPolicy.mfaFailures.name: user.userID])
            if let refusal = try await services.secondFactors.spend(
                try secondFactor.requiredString("code"), kind: kind, of: user.userID, in: app.tenant.settings)
            {
                throw refused(refusal, &passage)
            }
        }
        _ = try await checked(mac, key: key, for: account, keeping: false, app, &passage)
        // Hashed once the code is spent: of many requests with one right code, one pays for a hash.
        return try await setPassword(newPassword, of: user.userID, verifyingEmail: true, keepingSession: nil, app, &passage)
    }

    struct PasswordChanged: Encodable {
        let password_changed: Bool
        let sessions_ended: Int
    }

    /// Hashes and stores the user's new password with the request's row and
    /// its user change, then tells their lifecycle (sessions end but
    /// `keepingSession`, tickets and codes end): 200 `{"password_changed": true, "sessions_ended": n}`.
    func setPassword(
        _ password: String, of userID: String, verifyingEmail: Bool, keepingSession: UUID?, _ app: AccountApp,
        _ passage: inout PublicRequest
    ) async throws -> Response {
        let hashed = try await app.directory.newPassword(password, field: "new_password", in: app.id)
        var row = passage.row
        row.outcome = .success
        var change = change(.passwordChanged, of: userID, app, passage)
        change.keepingSession = keepingSession
        guard
            try await app.directory.setPassword(
                hashed, of: userID, verifyingEmail: verifyingEmail, in: app.id, recording: row, journaling: change)
        else { throw refused("user_deleted", &passage) }
        try await passage.succeededInTheRoutesStatement()
        let outcome = try await services.userLifecycle.apply(change)
        return try AdminResponses.json(PasswordChanged(password_changed: true, sessions_ended: outcome.sessions))
    }
}
