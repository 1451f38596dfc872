/// An app's `self_service` settings: what its users may do for themselves
/// with no operator in the loop (sign up, verify their address, recover a
/// forgotten password, change their password and address, delete their
/// account), and how long each code lives. Off unless set; every flow is
/// off in the default object but the ones named.
public struct SelfServiceSettings: Sendable, Equatable, Codable {
    /// Who may create an account.
    public enum SignUp: String, Sendable, Codable, CaseIterable, Comparable {
        case closed
        /// An account signs in only once its address is verified.
        case verifiedEmail = "verified_email"
        /// An account signs in at once; its address is verified when the user enters the code.
        case open

        /// Closed is the tightest, open the loosest.
        public static func < (lhs: SignUp, rhs: SignUp) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// What a new account's user id is.
    public enum UserIDs: String, Sendable, Codable, CaseIterable {
        /// A random UUID (lower case): the address can change, the id never does.
        case generated
        /// The address itself, as normalised.
        case email
    }

    public var signUp: SignUp
    public var userIDs: UserIDs
    public var passwordReset: Bool
    public var emailChange: Bool
    public var accountDeletion: Bool
    /// How long a verification, recovery or address-change code lives.
    public var codeLifetimeSeconds: Int
    /// Wrong tries before a code dies.
    public var maximumAttempts: Int
    /// How recent a session's sign-in must be to change the address or delete the account.
    public var recentSignInSeconds: Int

    public static let codeLifetimes = 60...3600
    public static let attempts = 1...10
    public static let recentSignIns = 60...86_400

    public init(
        signUp: SignUp = .closed, userIDs: UserIDs = .generated, passwordReset: Bool = false, emailChange: Bool = false,
        accountDeletion: Bool = false, codeLifetimeSeconds: Int = 900, maximumAttempts: Int = 5, recentSignInSeconds: Int = 600
    ) {
        self.signUp = signUp
        self.userIDs = userIDs
        self.passwordReset = passwordReset
        self.emailChange = emailChange
        self.accountDeletion = accountDeletion
        self.codeLifetimeSeconds = codeLifetimeSeconds
        self.maximumAttempts = maximumAttempts
        self.recentSignInSeconds = recentSignInSeconds
    }

    /// Whether a flow that mails codes and keeps password accounts is on
    /// (sign-up, recovery, a new address). Deletion alone needs neither: a
    /// user who signed in with Apple, a phone or a passkey may leave too.
    public var mailsCodes: Bool { signUp != .closed || passwordReset || emailChange }

    /// The first setting in which these are looser than `stored` (sign-up
    /// opened further, a code living longer or taking more tries, an older
    /// sign-in counted as recent), by its name in the API; nil when they
    /// loosen nothing. Turning a flow on or off is not a loosening here: a
    /// user recovering or deleting their own account is theirs to do.
    public func loosening(of stored: SelfServiceSettings) -> String? {
        if signUp > stored.signUp { return CodingKeys.signUp.rawValue }
        if codeLifetimeSeconds > stored.codeLifetimeSeconds { return CodingKeys.codeLifetimeSeconds.rawValue }
        if maximumAttempts > stored.maximumAttempts { return CodingKeys.maximumAttempts.rawValue }
        if recentSignInSeconds > stored.recentSignInSeconds { return CodingKeys.recentSignInSeconds.rawValue }
        return nil
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case signUp = "sign_up"
        case userIDs = "user_ids"
        case passwordReset = "password_reset"
        case emailChange = "email_change"
        case accountDeletion = "account_deletion"
        case codeLifetimeSeconds = "code_ttl_seconds"
        case maximumAttempts = "max_attempts"
        case recentSignInSeconds = "recent_sign_in_seconds"
    }
}
