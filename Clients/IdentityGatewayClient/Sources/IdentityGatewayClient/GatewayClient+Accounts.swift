/// Self-service accounts (where the app's `self_service` turns them on) and
/// the second factor: sign-up, verification, recovery, a new password, the
/// account's deletion, and TOTP enrolment. The routes that take the
/// session send its live refresh token without spending it, in the lane,
/// so they never race a refresh.
extension GatewayClient {
    /// Creates a password account for `email` and sends it a verification
    /// code. Answered alike for an address that already has an account
    /// (its owner is sent a notice instead).
    public func signUp(
        email: String, password: String, firstName: String? = nil, lastName: String? = nil, displayName: String? = nil
    ) async throws(IdentityGatewayError) -> CodeSent {
        try checkQuiet()
        return try codeSent(
            try await api.post(
                "v1/accounts/sign_up",
                RequestBody.SignUp(
                    app_id: configuration.appID, email: email, password: password, first_name: firstName, last_name: lastName,
                    display_name: displayName)))
    }

    /// Sends a new verification code to `email`.
    public func requestVerificationCode(to email: String) async throws(IdentityGatewayError) -> CodeSent {
        try checkQuiet()
        return try codeSent(
            try await api.post("v1/accounts/verification", RequestBody.Email(app_id: configuration.appID, email: email, locale: nil)))
    }

    /// Confirms the address with the code it was sent, and returns the
    /// account's user id (the one a password sign-in names).
    public func confirmVerification(email: String, code: String) async throws(IdentityGatewayError) -> String? {
        try checkQuiet()
        let answer = try await api.post(
            "v1/accounts/verification/confirm", RequestBody.EmailCode(app_id: configuration.appID, email: email, code: code))
        return try succeeded(answer, as: AnswerBody.Verified.self).user_id
    }

    /// Sends a password recovery code to `email` (alike for any address).
    public func requestPasswordReset(for email: String) async throws(IdentityGatewayError) -> CodeSent {
        try checkQuiet()
        return try codeSent(
            try await api.post(
                "v1/accounts/password_reset", RequestBody.Email(app_id: configuration.appID, email: email, locale: nil)))
    }

    /// Sets a new password with the recovery code; an account with a second
    /// factor also needs its code (``IdentityGatewayError/secondFactorRequired``
    /// without it, and the email code stays live). Returns how many sessions ended.
    @discardableResult
    public func confirmPasswordReset(
        email: String, code: String, newPassword: String, secondFactor: SecondFactorProof? = nil
    ) async throws(IdentityGatewayError) -> Int {
        try checkQuiet()
        let answer = try await api.post(
            "v1/accounts/password_reset/confirm",
            RequestBody.PasswordReset(
                app_id: configuration.appID, email: email, code: code, new_password: newPassword,
                second_factor: secondFactor.map { .init(type: $0.fields.type, code: $0.fields.code) }))
        return try succeeded(answer, as: AnswerBody.PasswordChanged.self).sessions_ended ?? 0
    }

    /// Sets a new password with the session and the current one; the user's
    /// other sessions end, this one stays. Returns how many ended.
    @discardableResult
    public func changePassword(current: String, new: String) async throws(IdentityGatewayError) -> Int {
        try await sessionCall("v1/accounts/password") { session in
            RequestBody.PasswordChange(
                app_id: session.appID, refresh_token: session.refreshToken, current_password: current, new_password: new)
        } read: { answer, _ throws(IdentityGatewayError) in
            try self.succeeded(answer, as: AnswerBody.PasswordChanged.self).sessions_ended ?? 0
        }
    }

    /// Deletes the user's account (Apple's App Store asks apps to offer it):
    /// with a session whose sign-in is recent, or with the password
    /// (``IdentityGatewayError/recentSignInRequired`` otherwise). The
    /// session is removed from the store once the gateway answers.
    public func deleteAccount(password: String? = nil) async throws(IdentityGatewayError) {
        try await sessionCall("v1/accounts/deletion") { session in
            RequestBody.Deletion(app_id: session.appID, refresh_token: session.refreshToken, password: password)
        } read: { answer, session throws(IdentityGatewayError) in
            guard answer.isSuccess else { throw self.refused(answer) }
            try await self.forget(session)
        }
    }

    /// Enrols a TOTP factor for the session's user; confirm it with
    /// ``confirmTOTP(code:)`` and the first code their authenticator shows.
    public func enrollTOTP() async throws(IdentityGatewayError) -> TOTPEnrollment {
        try await sessionCall("v1/mfa/totp") { session in
            RequestBody.SessionOnly(app_id: session.appID, refresh_token: session.refreshToken)
        } read: { answer, _ throws(IdentityGatewayError) in
            let totp = try self.succeeded(answer, as: AnswerBody.TOTP.self)
            return TOTPEnrollment(secret: totp.secret, otpauthURI: totp.otpauth_uri, recoveryCodes: totp.recovery_codes)
        }
    }

    /// Enrols a TOTP factor with a sign-in's ticket, where the app requires
    /// a factor the user does not have yet (``SecondFactorChallenge/needsEnrollment``);
    /// then complete the sign-in with the factor's first code.
    public func enrollTOTP(for challenge: SecondFactorChallenge) async throws(IdentityGatewayError) -> TOTPEnrollment {
        try checkQuiet()
        let answer = try await api.post("v1/mfa/totp", RequestBody.Ticket(app_id: configuration.appID, mfa_ticket: challenge.ticket))
        let totp = try succeeded(answer, as: AnswerBody.TOTP.self)
        return TOTPEnrollment(secret: totp.secret, otpauthURI: totp.otpauth_uri, recoveryCodes: totp.recovery_codes)
    }

    /// Confirms the session user's new TOTP factor with one of its codes;
    /// from then on their sign-ins ask for it.
    public func confirmTOTP(code: String) async throws(IdentityGatewayError) {
        try await sessionCall("v1/mfa/totp/confirm") { session in
            RequestBody.SessionCode(app_id: session.appID, refresh_token: session.refreshToken, code: code)
        } read: { answer, _ throws(IdentityGatewayError) in
            guard answer.isSuccess else { throw self.refused(answer) }
        }
    }
}
