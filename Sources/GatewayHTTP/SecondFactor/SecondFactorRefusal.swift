import GatewayCore
/// The audit reasons of second-factor steps that did not give a token.
enum SecondFactorRefusal {
    /// The first factor was right; the user owes their factor's code (answered 403 with a ticket).
    static let required = "mfa_required"
    /// The first factor was right; the user must enrol a factor first (403 with a ticket).
    static let enrolmentRequired = "mfa_enrollment_required"
    static let ticketMalformed = "mfa_ticket_malformed"
    /// No ticket of the app has that digest.
    static let ticketUnknown = "mfa_ticket_unknown"
    static let ticketSpent = "mfa_ticket_spent"
    static let ticketExpired = "mfa_ticket_expired"
    /// The request names another user than the ticket's.
    static let ticketUserID = "mfa_ticket_user_id"
    /// The request answers another nonce than the ticket's sign-in.
    static let ticketNonce = "mfa_ticket_nonce"
    /// The user's factor is gone (reset since the ticket), or a recovery code came before any was confirmed.
    static let noFactor = "mfa_no_factor"
    static let codeInvalid = "mfa_code_invalid"
    /// A right code of a step already taken (on this replica or another).
    static let codeReplayed = "mfa_code_replayed"
    static let recoveryCodeInvalid = "recovery_code_invalid"
}

extension GatewayError.Code {
    /// The first factor was right; a second is owed (403, with a ticket).
    static let mfaRequired = GatewayError.Code(rawValue: SecondFactorRefusal.required)
    /// The first factor was right; the user must enrol a second factor first (403, with a ticket).
    static let mfaEnrollmentRequired = GatewayError.Code(rawValue: SecondFactorRefusal.enrolmentRequired)
}
