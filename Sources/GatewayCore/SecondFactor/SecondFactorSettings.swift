/// An app's `mfa` settings: whether a sign-in must pass a second factor
/// (TOTP, or a recovery code) before a token is minted. Off unless set.
public struct SecondFactorSettings: Sendable, Equatable, Codable {
    public enum Requirement: String, Sendable, Codable, CaseIterable {
        /// Users who enrolled a factor must pass it; the others sign in with one.
        case optional
        /// Every user must pass one: a user with none is answered 403
        /// `mfa_enrollment_required` and a ticket to enrol with, and gets a
        /// token only once they typed their new factor's first code.
        case required
    }

    public var requirement: Requirement
    /// First factors that already are two (a passkey with user
    /// verification, a tenant's webhook that asks its own): their sign-ins
    /// are asked for nothing more (see ``exempts(_:signInMethods:)``).
    public var exemptCredentialTypes: [String]
    /// How long a ticket for the second step lives.
    public var ticketLifetimeSeconds: Int
    /// The issuer authenticator apps show beside the code; the app's name when unset.
    public var issuer: String?

    public static let ticketLifetimeRange = 30...900
    public static let maximumIssuerBytes = 64

    public init(
        requirement: Requirement = .optional, exemptCredentialTypes: [String] = [], ticketLifetimeSeconds: Int = 300,
        issuer: String? = nil
    ) {
        self.requirement = requirement
        self.exemptCredentialTypes = exemptCredentialTypes
        self.ticketLifetimeSeconds = ticketLifetimeSeconds
        self.issuer = issuer
    }

    enum CodingKeys: String, CodingKey {
        case requirement
        case exemptCredentialTypes = "exempt_credential_types"
        case ticketLifetimeSeconds = "ticket_lifetime_seconds"
        case issuer
    }

    /// Whether a sign-in by `credentialType` is asked for nothing more: its
    /// type is exempt and, where its verifier says of each sign-in how it
    /// was made (`signInMethods`, ``VerifiedIdentity/methods``: a passkey),
    /// that sign-in was two factors itself (`mfa`). A passkey used without
    /// user verification is one factor, what the user has, exempt or not,
    /// so an app's `plugins.passkey.user_verification` of `preferred` never
    /// loosens the operator's exemption.
    public func exempts(_ credentialType: String, signInMethods: [String]?) -> Bool {
        guard exemptCredentialTypes.contains(credentialType) else { return false }
        return signInMethods.map(AuthenticationMethods.areMultipleFactors) ?? true
    }

    /// What a sign-in by `credentialType` (its own methods `signInMethods`,
    /// if its verifier says them) of a user whose factor is `factor` (nil:
    /// none, or not confirmed) must do before its token.
    public func demand(credentialType: String, signInMethods: [String]?, factor: StoredSecondFactor?) -> SecondFactorDemand {
        if exempts(credentialType, signInMethods: signInMethods) { return .nothing }
        if let factor, factor.isConfirmed { return .code }
        return requirement == .required ? .enrolment : .nothing
    }
}

/// What a verified first factor still owes before its token.
public enum SecondFactorDemand: Sendable, Equatable {
    case nothing
    /// A code of the user's confirmed factor (TOTP, or a recovery code).
    case code
    /// A factor: the user has none, and the app requires one.
    case enrolment
}
