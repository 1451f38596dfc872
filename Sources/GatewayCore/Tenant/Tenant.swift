/// A tenant ready to serve token requests: its settings, its signing key
/// parsed once, and one verifier per credential type it accepts.
public struct Tenant: Sendable {
    public let settings: AppSettings
    /// `nil` while the app has no active key.
    public let signingKey: TokenSigningKey?
    /// Every key of the app (next, active, retired), newest first: its published key set.
    public let keySet: [PublicJWK]
    private let verifiers: [String: Result<any CredentialVerifier, GatewayError>]

    /// - Parameter verifiers: per credential type, the verifier, or the error
    ///   its options produced (answered to every request of that type).
    public init(
        settings: AppSettings, signingKey: TokenSigningKey?, keySet: [PublicJWK] = [],
        verifiers: [String: Result<any CredentialVerifier, GatewayError>]
    ) {
        self.settings = settings
        self.signingKey = signingKey
        self.keySet = keySet
        self.verifiers = verifiers
    }

    /// The verifier for `credentialType`, or the 400/403 that explains why there is none.
    public func verifier(for credentialType: String) throws(GatewayError) -> any CredentialVerifier {
        guard let slot = verifiers[credentialType] else {
            let accepted = settings.credentialTypes.joined(separator: ", ")
            throw GatewayError(
                .unsupportedCredentialType, .invalidRequest,
                "This app does not accept credentials of type '\(credentialType)'; it accepts: \(accepted).")
        }
        return try slot.get()
    }
}
