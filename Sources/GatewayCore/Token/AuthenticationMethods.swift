/// RFC 8176 `amr` values the gateway reads as well as writes.
public enum AuthenticationMethods {
    /// `mfa`: more than one factor was checked (a second factor's code, or a
    /// passkey the device verified its user for).
    public static let multipleFactors = "mfa"
    /// `otp`: a one-time code (the second factor's TOTP or a recovery code).
    public static let oneTimeCode = "otp"

    /// Whether a sign-in made by `methods` was two factors or more.
    public static func areMultipleFactors(_ methods: [String]) -> Bool {
        methods.contains(multipleFactors)
    }
}
