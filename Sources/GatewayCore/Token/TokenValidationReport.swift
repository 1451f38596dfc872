/// The verdict on a token a client pasted in, with every problem found: the
/// checks Layer's dashboard validation tool made. Expiry is not judged (as
/// Layer's tool did not), so a token can be checked after the fact.
public struct TokenValidationReport: Sendable {
    public struct Problem: Sendable, Equatable, Codable {
        /// Stable snake_case code, e.g. `bad_signature`.
        public let code: String
        public let message: String

        public init(_ code: String, _ message: String) {
            self.code = code
            self.message = message
        }
    }

    public private(set) var problems: [Problem] = []
    public let header: [String: JSONValue]
    public let claims: [String: JSONValue]
    /// Set by the checks when the header and claims name a key to look up.
    public let keyLookup: (issuer: ProviderID, keyID: KeyID)?
    private let token: ParsedIdentityToken?

    public var isValid: Bool { problems.isEmpty }

    /// Checks everything that needs no key: the shape, the header and the claims.
    /// Follow with ``checkSignature(publicKeyPEM:)``.
    public init(compact: String) {
        guard let token = ParsedIdentityToken(compact: compact) else {
            self.token = nil
            self.header = [:]
            self.claims = [:]
            self.keyLookup = nil
            self.problems = [
                Problem("malformed_token", "The token is not three base64url parts whose first two are JSON objects.")
            ]
            return
        }
        self.token = token
        self.header = token.header
        self.claims = token.claims
        self.problems = Self.layerProblems(in: token)
        if let issuer = token.claims["iss"]?.stringValue.flatMap(ProviderID.init),
            let keyID = token.header["kid"]?.stringValue.flatMap(KeyID.init)
        {
            self.keyLookup = (issuer, keyID)
        } else {
            self.keyLookup = nil
        }
    }

    /// Verifies the signature under the key the header names; `nil` when no
    /// app with that provider id publishes that key.
    public mutating func checkSignature(publicKeyPEM: String?) {
        guard let token, keyLookup != nil else { return }
        guard let publicKeyPEM else {
            problems.append(Problem("unknown_kid", "No app with this iss publishes the key named by kid."))
            return
        }
        guard header["alg"] == .string("RS256"), token.hasValidSignature(publicKeyPEM: publicKeyPEM) else {
            problems.append(Problem("bad_signature", "The signature does not verify under the key named by kid."))
            return
        }
    }

    /// What is wrong with `token` as a Layer identity token, its signature aside.
    public static func layerProblems(in token: ParsedIdentityToken) -> [Problem] {
        var problems: [Problem] = []
        checkHeader(token.header, into: &problems)
        checkClaims(token.claims, into: &problems)
        return problems
    }

    private static func checkHeader(_ header: [String: JSONValue], into problems: inout [Problem]) {
        if header["alg"] != .string("RS256") {
            problems.append(Problem("wrong_alg", "The header's alg must be RS256."))
        }
        if header["typ"] != .string("JWT") {
            problems.append(Problem("wrong_typ", "The header's typ must be JWT."))
        }
        if header["cty"] != .string("layer-eit;v=1") {
            problems.append(Problem("wrong_cty", "The header's cty must be layer-eit;v=1."))
        }
        if header["kid"]?.stringValue.flatMap(KeyID.init) == nil {
            problems.append(Problem("bad_kid", "The header's kid must be a Layer key id (layer:///keys/<uuid>)."))
        }
    }

    private static func checkClaims(_ claims: [String: JSONValue], into problems: inout [Problem]) {
        if claims["iss"]?.stringValue.flatMap(ProviderID.init) == nil {
            problems.append(Problem("bad_iss", "The iss claim must be a Layer provider id (layer:///providers/<uuid>)."))
        }
        if (claims["prn"]?.stringValue ?? "").isEmpty {
            problems.append(Problem("bad_prn", "The prn claim must be a non-empty string: the user id."))
        }
        if (claims["nce"]?.stringValue ?? "").isEmpty {
            problems.append(Problem("bad_nce", "The nce claim must be the nonce, a non-empty string."))
        }
        let issuedAt = TokenChecks.integer(claims["iat"])
        let expiresAt = TokenChecks.integer(claims["exp"])
        if issuedAt == nil {
            problems.append(Problem("bad_iat", "The iat claim must be an integer: seconds since the epoch."))
        }
        if expiresAt == nil {
            problems.append(Problem("bad_exp", "The exp claim must be an integer: seconds since the epoch."))
        }
        if let issuedAt, let expiresAt {
            if expiresAt <= issuedAt {
                problems.append(Problem("exp_not_after_iat", "The exp claim must be later than iat."))
            } else if expiresAt - issuedAt > 600 {
                problems.append(Problem("lifetime_too_long", "exp - iat must be at most 600 seconds: a nonce lives 10 minutes."))
            }
        }
        for name in UserProfile.fieldNames {
            if let value = claims[name], value.stringValue == nil {
                problems.append(Problem("bad_\(name)", "The \(name) claim, when present, must be a string."))
            }
        }
    }
}
