/// Checks one kind of credential for one app. A plugin builds one verifier per
/// app from that app's settings when the app is loaded, never per request.
public protocol CredentialVerifier: Sendable {
    /// Decides whether the attempt proves the identity it claims.
    ///
    /// Throw ``GatewayError`` for malformed input (a missing field is a 400);
    /// return ``VerificationResult/rejected(reason:)`` for credentials that do
    /// not match, whatever the cause: the caller answers every rejection alike.
    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult

    /// `true` when asking ``verify(_:)`` costs nothing worth limiting: no I/O,
    /// microseconds of work (static users answer from memory). The gateway then verifies before it
    /// counts the request against the app's limits, and writes the counters
    /// and an issued token's audit row in one statement. The client still
    /// learns nothing before the limits allow: a refused request gets its 429
    /// whatever the verdict. Leave it `false` (the default) for anything that
    /// costs: limits must stop an attacker before the work, not after.
    var isCheapToAsk: Bool { get }

    /// What this kind of credential is limited by, beside the gateway's own
    /// subjects (client address, app, user id): policy name → subject, such
    /// as `phone_failures` → the phone number. The policies are the plugin's
    /// (``RateLimitPolicy``); failures count as for `user_failures`.
    func rateLimitSubjects(for credentials: Credentials) -> [String: String]

    /// `true` when the credential carries its own proof of who the user is
    /// (a provider's signed ID token, a passkey assertion, a refresh token):
    /// a `user_id` the request sends is then only a claim, and nothing is
    /// counted against that user before the proof holds, or anyone who knows
    /// a user id could spend their failure budget and lock them out. The user
    /// the proof names (``VerificationResult/verified(_:)``, or the `userID`
    /// of a ``VerificationResult/rejected(reason:userID:)``) is held to the
    /// `user_failures` limit from then on. Leave it `false` (the default)
    /// for secrets checked against the named user (a password, a code).
    var provesItsUser: Bool { get }

    /// How a verified attempt proves who the user is, as RFC 8176 `amr`
    /// values (`pwd`, `sms`, `otp`, `hwk`, ...): what OpenID Connect tokens
    /// and sessions say of the sign-in. Empty (the default) when not known
    /// (a tenant's own service decides, say).
    var authenticationMethods: [String] { get }

    /// Why the user a verified attempt found is no longer one this verifier
    /// would sign in as it did (`user_deleted`, `user_disabled`,
    /// `password_changed`), or nil. Asked once a sign-in's session is
    /// written, for verifiers whose users the gateway keeps (the password
    /// directory): deleting or disabling a user, or a new password, ends
    /// their sessions, and a sign-in checked before that but written after
    /// would otherwise start one that outlives it. nil (the default) where
    /// the user lives elsewhere.
    func lapse(of identity: VerifiedIdentity, in app: AppSettings) async throws -> String?
}

extension CredentialVerifier {
    public func lapse(of identity: VerifiedIdentity, in app: AppSettings) async throws -> String? { nil }

    public var isCheapToAsk: Bool { false }

    public var provesItsUser: Bool { false }

    public var authenticationMethods: [String] { [] }

    public func rateLimitSubjects(for credentials: Credentials) -> [String: String] { [:] }
}

/// What a verifier is asked: who claims to be whom, with which credential.
public struct CredentialAttempt: Sendable {
    public let app: AppSettings
    public let userID: String?
    public let credentials: Credentials
    public let requestID: String
    /// The token request's nonce, which the token will carry: what a
    /// provider's ID token is bound to (the ID-token plugin's nonce rules).
    public let nonce: String

    public init(app: AppSettings, userID: String?, credentials: Credentials, requestID: String, nonce: String) {
        self.app = app
        self.userID = userID
        self.credentials = credentials
        self.requestID = requestID
        self.nonce = nonce
    }
}

/// A verifier's answer.
public enum VerificationResult: Sendable, Equatable {
    case verified(VerifiedIdentity)
    /// The credentials do not prove the identity. `reason` is a stable code for
    /// the audit trail (`unknown_user`, `bad_password`, ...); it never reaches
    /// the client. `userID` is the user the check learnt the attempt was
    /// about, when the request named none or the credential proves its own
    /// user (``CredentialVerifier/provesItsUser``; a provider's validly signed
    /// ID token that failed a later check): the failure then counts against
    /// that user's `user_failures` limit.
    case rejected(reason: String, userID: String? = nil)
    /// No verdict: the service that decides (a tenant's webhook) did not
    /// give one. The client is answered 502 `credential_service_unavailable`,
    /// never 401 and never a token; `reason` is the audit trail's code
    /// (`webhook_timeout`, ...). Like a rejection it counts against the
    /// failure limits, so a slow service gives an attacker no free tries.
    case undecided(reason: String)

    /// `verified`, or the reason's code: what a trace may say of the verdict.
    public var label: String {
        switch self {
        case .verified: "verified"
        case .rejected(let reason, _), .undecided(let reason): reason
        }
    }
}

/// The user a verifier vouches for, with the profile fields that become the
/// token's optional claims.
public struct VerifiedIdentity: Sendable, Equatable {
    public var userID: String
    public var profile: UserProfile
    /// How this attempt proved the user, where that differs from one
    /// attempt to the next (a passkey: synced or bound to its device, the
    /// user verified or only present); `nil` for the verifier's
    /// ``CredentialVerifier/authenticationMethods``.
    public var methods: [String]?
    /// A digest of what the verifier checked the credential against (a
    /// password user's stored hash), where it keeps that itself: its
    /// ``CredentialVerifier/lapse(of:in:)`` compares it with what it keeps
    /// once the session is written, to tell a credential changed meanwhile.
    public var checkedAgainst: [UInt8]?

    public init(userID: String, profile: UserProfile = UserProfile()) {
        self.userID = userID
        self.profile = profile
    }
}
