/// The `credentials` object of a token request: a `type` that selects the
/// credential plugin, and that plugin's string fields (`password`, `code`, ...).
public struct Credentials: Sendable, Equatable {
    /// At most this many fields besides `type`.
    public static let maximumFieldCount = 16
    /// A field's value may hold at most this many bytes (the longest password
    /// the password directory accepts), checked before any plugin sees it.
    public static let maximumFieldBytes = 1024
    /// Except the fields that carry a signed proof, which may hold this
    /// many: a provider's `id_token` (Apple's and Google's are 1–2 KB), a
    /// passkey assertion's base64url parts (an RSA-4096 signature is 683
    /// characters, a credential id up to 1 364), a solved human check's
    /// `captcha_token` (Turnstile's are up to 2 048).
    public static let maximumSignedProofBytes = 4096
    static let signedProofFields: Set<String> = [
        "id_token", "credential_id", "client_data_json", "authenticator_data", "signature", "user_handle", "captcha_token",
    ]

    /// The most bytes the field `name` may hold.
    public static func maximumBytes(of name: String) -> Int {
        signedProofFields.contains(name) ? maximumSignedProofBytes : maximumFieldBytes
    }
    /// A field's name may hold at most this many bytes.
    public static let maximumNameBytes = 64

    public let type: String
    public let fields: [String: String]

    public init(type: String, fields: [String: String] = [:]) {
        self.type = type
        self.fields = fields
    }

    /// A required field, or a 400 naming it.
    public func requiredField(_ name: String) throws(GatewayError) -> String {
        guard let value = fields[name], !value.isEmpty else {
            throw .invalidRequest("credentials.\(name) is required for credentials of type \(type).")
        }
        return value
    }
}
