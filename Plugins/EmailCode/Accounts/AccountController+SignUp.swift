import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Hummingbird

extension AccountController {
    // MARK: Sign-up and verification

    /// `{app_id, email, password, first_name?, last_name?, display_name?}` → 202 `{expires_in, resend_after}`.
    func signUp(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws -> Response {
        try input.rejectUnknown(allowed: Set(["app_id", "email", "password", SendGuard.tokenField] + Self.profileFields))
        let address = try EmailAddress.parse(try input.string("email"), field: "email")
        let password = try input.requiredString("password")
        let profile = try UserProfile.read(input)
        let app = try await open(input, &passage, address: address) { $0.signUp != .closed }
        try await limitSend(
            to: address, input, app, &passage,
            limits: [
                RateLimitPolicy.emailSendsPerAddress.name: address.text, RateLimitPolicy.signUpsPerIP.name: passage.clientIP,
                RateLimitPolicy.signUpsPerApp.name: "*", RateLimitPolicy.emailDailyBudget.name: "*",
            ])
        // Hashed whoever the address belongs to: the answer costs the same.
        let hashed = try await app.directory.newPassword(password, field: "password", in: app.id)
        let newUserID = app.selfService.userIDs == .email ? address.text : UUID().uuidString.lowercased()
        let requestID = passage.row.requestID
        // A row either way, in the sign-up's transaction: the registered address's commit costs what the new one's does.
        let found = try await app.directory.signUp(
            newUserID, email: address.text, password: hashed, profile: profile, in: app.id
        ) { outcome in
            let (event, userID) =
                switch outcome {
                case .created: ("account.created", newUserID)
                case .exists(let account): ("account.sign_up_for_existing", account.userID)
                }
            return AuditEvent(
                appID: app.id, event: event, outcome: .success, userID: userID, credentialType: "password",
                requestID: requestID, detail: ["email": address.text, "by": "user"])
        }
        let account: Account
        let mail: AccountMail
        switch found {
        case .created:
            account = Account(userID: newUserID, email: address.text, emailVerified: false, disabled: false)
            mail = .verification
            passage.row.detail["account"] = "created"
        case .exists(let existing):
            // The address's account stays as it is, whoever asks: a second sign-up neither takes it over nor
            // sets its password, verified or not (a sign-up after its owner's, before they verify, would
            // otherwise hand the owner's account a stranger's password). Its owner is told; a forgotten
            // password is recovered, an unverified address asks for a new code.
            account = existing
            mail = .signUpNotice
            passage.row.detail["account"] = "exists"
        }
        passage.row.userID = account.userID
        let key: AccountCodeKey = mail == .verification ? .verification(of: account.userID) : .verificationOfNobody(at: address)
        let answer = try await send(mail, key: key, to: address, app, &passage)
        return try await accepted(answer, &passage)
    }

    /// `{app_id, email}` → 202: a new verification code for an account not yet verified.
    func sendVerification(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws -> Response {
        try input.rejectUnknown(allowed: ["app_id", "email", SendGuard.tokenField])
        let address = try EmailAddress.parse(try input.string("email"), field: "email")
        let app = try await open(input, &passage, address: address) { $0.signUp != .closed }
        try await limitSend(to: address, input, app, &passage)
        let account = try await app.directory.account(ofEmail: address.text, in: app.id)
        let answer: CodeSent
        if let account, account.awaitsVerification {
            passage.row.userID = account.userID
            answer = try await send(.verification, key: .verification(of: account.userID), to: address, app, &passage)
        } else {
            answer = try await send(nil, key: .verificationOfNobody(at: address), to: address, app, &passage)
        }
        return try await accepted(answer, &passage)
    }

    /// `{app_id, email, code}` → 200 `{"email_verified": true, "user_id"}`:
    /// the code proved the mailbox, so its account's id is its owner's to
    /// know (a generated one is what a password sign-in names).
    func confirmVerification(_ request: Request, _ input: JSONInput, _ passage: inout PublicRequest) async throws
        -> Response
    {
        try input.rejectUnknown(allowed: ["app_id", "email", "code"])
        let address = try EmailAddress.parse(try input.string("email"), field: "email")
        let code = try Self.code(input)
        let app = try await open(input, &passage, address: address) { $0.signUp != .closed }
        try await passage.limits([RateLimitPolicy.accountCodeFailures.name: address.text])
        let account = try await app.directory.account(ofEmail: address.text, in: app.id)
        let key = account.map { AccountCodeKey.verification(of: $0.userID) } ?? .verificationOfNobody(at: address)
        let user = try await spent(code, key: key, for: account, app, &passage)
        var row = passage.row
        row.outcome = .success
        guard try await app.directory.verifyEmail(address.text, of: user.userID, in: app.id, recording: row) else {
            throw refused("address_changed", &passage)
        }
        try await passage.succeededInTheRoutesStatement()
        return try AdminResponses.json(EmailVerified(email_verified: true, user_id: user.userID))
    }

    struct EmailVerified: Encodable {
        let email_verified: Bool
        let user_id: String
    }
}
