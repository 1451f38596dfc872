public import Foundation

/// A token the gateway minted for one nonce.
public struct IdentityToken: Hashable, Sendable {
    /// The compact JWS to hand to the SDK (`LYRClient.authenticate(withIdentityToken:)`, ...).
    public let token: String
    /// The profile it is of (`layer` unless the gateway named another).
    public let profile: TokenProfile
    /// The nonce it answers.
    public let nonce: String
}

/// What a sign-in's first step answered.
public enum SignInResult: Sendable {
    /// The user is signed in; where the app keeps sessions, the session is stored.
    case signedIn(IdentityToken)
    /// The credential was right and the app asks for a second factor:
    /// complete with ``GatewayClient/completeSignIn(_:with:)``.
    case secondFactorRequired(SecondFactorChallenge)
}

/// A sign-in waiting for its second step, from the gateway's 403
/// `mfa_required` (or `mfa_enrollment_required`).
public struct SecondFactorChallenge: Hashable, Sendable {
    /// The single-use ticket the second step sends (`mt1.`...).
    public let ticket: String
    /// How long the ticket lives from when it was answered.
    public let expiresIn: Duration
    /// What completes it: `totp`, `recovery_code`.
    public let methods: [String]
    /// True when the user has no factor yet and the app requires one: enrol
    /// with ``GatewayClient/enrollTOTP(for:)``, then complete with the
    /// new factor's first code.
    public let needsEnrollment: Bool
    /// The sign-in's nonce, which the second step answers too.
    public let nonce: String
    /// The user the sign-in named, if it named one.
    public let userID: String?
    let tokenProfile: TokenProfile?
}

/// A second factor's answer.
public enum SecondFactorProof: Hashable, Sendable {
    /// The six digits an authenticator app shows.
    case totp(String)
    /// One of the user's recovery codes (`xxxxx-xxxxx`).
    case recoveryCode(String)

    var fields: (type: String, code: String) {
        switch self {
        case .totp(let code): ("totp", code)
        case .recoveryCode(let code): ("recovery_code", code)
        }
    }
}

/// A new TOTP factor, shown once: put ``otpauthURI`` in a QR code, keep the
/// recovery codes, and confirm with the first code.
public struct TOTPEnrollment: Hashable, Sendable {
    /// The secret in base32, for typing into an authenticator app.
    public let secret: String
    /// `otpauth://totp/...`, for a QR code.
    public let otpauthURI: String
    /// Ten single-use codes for when the authenticator is lost.
    public let recoveryCodes: [String]
}

/// A code's 202: how long it lives and when another may be asked for.
public struct CodeSent: Hashable, Sendable {
    /// How long the code lives.
    public let expiresIn: Duration
    /// How long before another code may be asked for (zero where the route keeps no delay).
    public let resendAfter: Duration
}

/// The session the client holds, as the app may show it.
public struct SessionSummary: Hashable, Sendable {
    /// The session's id, as the app's admins see it listed.
    public let sessionID: String
    /// The user the app named at sign-in, or the one the token names.
    public let userID: String?
    /// When the refresh token stops working unless used (each refresh moves it on).
    public let refreshTokenExpiresAt: Date
}

/// A passkey sign-in's options (WebAuthn's request options): what
/// `ASAuthorizationPlatformPublicKeyCredentialProvider` or Credential
/// Manager needs to ask the authenticator for an assertion.
public struct PasskeyRequestOptions: Hashable, Sendable {
    /// The challenge's bytes (the gateway sends them base64url).
    public let challenge: Data
    /// The relying party (the app's domain) the passkey belongs to.
    public let relyingPartyID: String
    /// How long the authenticator may take.
    public let timeout: Duration
    /// `required` or `preferred`.
    public let userVerification: String
}

/// An authenticator's assertion, as the passkey credential sends it.
public struct PasskeyAssertion: Hashable, Sendable {
    /// The credential's id (`rawId`).
    public var credentialID: Data
    /// The client data the authenticator signed over, as serialised.
    public var clientDataJSON: Data
    /// The authenticator's data: the relying party's hash, flags, counter.
    public var authenticatorData: Data
    /// The signature over the authenticator data and the client data's hash.
    public var signature: Data
    /// The user handle the registration gave (discoverable passkeys return it).
    public var userHandle: Data?

    /// An assertion from its parts, as the platform's API answers them.
    public init(credentialID: Data, clientDataJSON: Data, authenticatorData: Data, signature: Data, userHandle: Data?) {
        self.credentialID = credentialID
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}
