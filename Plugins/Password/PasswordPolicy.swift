public import GatewayCore

/// What a new password must be: long enough for the app, short enough to
/// hash without abuse, and more than blanks.
struct PasswordPolicy: Sendable {
    /// The longest password accepted anywhere, on writes and on logins.
    static let maximumBytes = Credentials.maximumFieldBytes

    let minimumLength: Int
    /// The operator's ceiling on argon2 cost, for imported hashes.
    var hashLimits = PasswordHasher.Limits()

    /// - Throws: 400 `invalid_request` saying which rule failed (never the password).
    func check(_ password: String, field: String = "password") throws(GatewayError) {
        guard password.utf8.count <= Self.maximumBytes else {
            throw .invalidRequest("\(field) must be at most \(Self.maximumBytes) bytes.")
        }
        guard password.count >= minimumLength else {
            throw .invalidRequest("\(field) must be at least \(minimumLength) characters.")
        }
        guard !password.allSatisfy(\.isWhitespace) else {
            throw .invalidRequest("\(field) must not be only whitespace.")
        }
    }
}

extension GatewayError.Code {
    /// 403: the password was right, but the account's address is not verified
    /// yet and the app's `self_service.sign_up` is `verified_email`.
    public static let emailUnverified = GatewayError.Code(rawValue: "email_unverified")
}
