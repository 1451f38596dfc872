import Crypto
import Foundation
import GatewayCore

/// Why an ID token was not taken: the audit row's reason (`id_token_<check>`),
/// naming the check that failed and never the token.
enum IDTokenRefusal: String, Error, Sendable {
    /// Not a compact JWS of JSON objects, or a claim of the wrong type.
    case malformed
    /// `alg` is not RS256 or ES256 (`none` and HMAC included), or not the key's.
    case algorithm
    /// `iss` names no provider of the app.
    case issuer
    /// `aud` names none of the provider's audiences.
    case audience
    /// No key of the provider has the token's `kid`, even after a refetch.
    case unknownKey = "unknown_key"
    case signature
    case expired
    /// `iat` or `nbf` is later than now (beyond the clock skew).
    case notYetValid = "not_yet_valid"
    /// The `nonce` claim is missing or is not the request's nonce by the provider's rule.
    case nonce
    /// `sub` is missing or not a short string.
    case subject
    /// The request's `user_id` is not the user the token verifies.
    case userID = "user_id"
    /// The token was accepted once already (for this app).
    case replayed

    var auditReason: String { "id_token_\(rawValue)" }
}

/// An ID token split into its parts, before anything is trusted: enough to
/// pick the provider and the key.
struct UnverifiedIDToken: Sendable {
    static let maximumBytes = Credentials.maximumSignedProofBytes

    let token: ParsedIdentityToken
    let algorithm: String
    let keyID: String?
    let issuer: String

    init(_ compact: String) throws(IDTokenRefusal) {
        guard compact.utf8.count <= Self.maximumBytes, let token = ParsedIdentityToken(compact: compact) else {
            throw .malformed
        }
        guard case .string(let algorithm)? = token.header["alg"] else { throw .malformed }
        guard algorithm == "RS256" || algorithm == "ES256" else { throw .algorithm }
        switch token.header["kid"] {
        case nil: keyID = nil
        case .string(let kid)?: keyID = kid
        default: throw .malformed
        }
        guard case .string(let issuer)? = token.claims["iss"] else { throw .issuer }
        self.token = token
        self.algorithm = algorithm
        self.issuer = issuer
    }

    /// The key the token names: its `kid`'s, or the set's only key when it names none.
    func key(in keys: ProviderKeySet) -> ProviderKey? {
        if let keyID { return keys.keys[keyID] }
        return keys.keys.count == 1 ? keys.keys.values.first : nil
    }

    /// Checks the signature under `key`: nothing in a token is read as true
    /// before it holds. The token is then the provider's word on who its
    /// `sub` is, whatever its other claims say.
    func signed(by key: ProviderKey) throws(IDTokenRefusal) -> SignedIDToken {
        guard key.algorithm == algorithm else { throw .algorithm }
        guard key.verifies(token.signature, of: token.signingInput, algorithm: algorithm) else { throw .signature }
        guard case .string(let subject)? = token.claims["sub"], (1...255).contains(subject.utf8.count) else { throw .subject }
        return SignedIDToken(token: token, issuer: issuer, subject: subject)
    }

    /// The signature under `key`, then the claims against `provider`.
    func verify(
        with key: ProviderKey, provider: IDTokenProvider, requestNonce: String, now: Date
    ) throws(IDTokenRefusal) -> VerifiedIDToken {
        try signed(by: key).verify(provider: provider, requestNonce: requestNonce, now: now)
    }
}

/// An ID token whose signature holds, before its claims are checked: a
/// claim that fails is a failure of the user its `sub` names.
struct SignedIDToken: Sendable {
    let token: ParsedIdentityToken
    let issuer: String
    let subject: String

    /// Checks `iss`, `aud`, `exp`/`iat`/`nbf` and the `nonce` against `provider`.
    func verify(provider: IDTokenProvider, requestNonce: String, now: Date) throws(IDTokenRefusal) -> VerifiedIDToken {
        let claims = token.claims
        guard provider.issuers.contains(issuer) else { throw .issuer }

        let audiences: [String]
        switch claims["aud"] {
        case .string(let audience)?: audiences = [audience]
        case .array(let values)?: audiences = values.compactMap { if case .string(let text) = $0 { text } else { nil } }
        default: throw .audience
        }
        guard audiences.contains(where: provider.audiences.contains) else { throw .audience }

        let seconds = now.timeIntervalSince1970
        guard case .number(let expiresAt)? = claims["exp"], case .number(let issuedAt)? = claims["iat"] else { throw .malformed }
        guard seconds < expiresAt + Self.clockSkew else { throw .expired }
        guard issuedAt <= seconds + Self.clockSkew else { throw .notYetValid }
        if let notBefore = claims["nbf"] {
            guard case .number(let notBefore) = notBefore else { throw .malformed }
            guard notBefore <= seconds + Self.clockSkew else { throw .notYetValid }
        }
        // Providers' tokens live an hour at most; one claiming longer is held to that from its iat.
        guard seconds < issuedAt + Self.maximumLifetime + Self.clockSkew else { throw .expired }

        switch provider.nonce {
        case .none:
            break
        case .raw, .sha256:
            guard case .string(let nonce)? = claims["nonce"], !requestNonce.isEmpty else { throw .nonce }
            let expected = provider.nonce == .raw ? requestNonce : Self.sha256Hex(requestNonce)
            guard ConstantTime.equals(nonce, expected) else { throw .nonce }
        }

        return VerifiedIDToken(
            subject: subject, expiresAt: min(expiresAt, issuedAt + Self.maximumLifetime),
            emailVerified: Self.isTrue(claims["email_verified"]),
            email: claims["email"].flatMap { if case .string(let text) = $0 { text } else { nil } },
            name: claims["name"].flatMap { if case .string(let text) = $0, (1...256).contains(text.utf8.count) { text } else { nil } },
            picture: claims["picture"].flatMap { if case .string(let text) = $0, (1...2048).contains(text.utf8.count), text.hasPrefix("https://") { text } else { nil } },
            // What the signature covers, not its bytes: an ECDSA signature has a twin, (r, n − s), that verifies too.
            digest: Array(SHA256.hash(data: Array(token.signingInput))))
    }

    /// How far the provider's clock and ours may disagree: a minute.
    static let clockSkew: Double = 60
    /// The longest an ID token is taken after its `iat`: an hour, as Apple and Google issue them.
    static let maximumLifetime: Double = 3600

    static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// `true`, or Apple's `"true"`.
    private static func isTrue(_ value: JSONValue?) -> Bool {
        value == .bool(true) || value == .string("true")
    }
}

/// What a verified ID token says, and what remembers it.
struct VerifiedIDToken: Sendable, Equatable {
    let subject: String
    /// When it expires (seconds since 1970): how long it is remembered against replay.
    let expiresAt: Double
    let emailVerified: Bool
    /// The email as the provider gives it; only used where `emailVerified`.
    let email: String?
    let name: String?
    let picture: String?
    /// SHA-256 of what the signature covers (header and claims as sent): what the replay table keeps, never the token.
    let digest: [UInt8]
}
