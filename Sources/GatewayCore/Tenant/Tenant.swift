/// A tenant ready to serve token requests: its settings, one verifier per
/// credential type it accepts and one minter per token profile it issues,
/// each built once (keys opened and parsed) when the app is loaded.
public struct Tenant: Sendable {
    public let settings: AppSettings
    /// Every key of the app (next, active, retired), newest first: its published key set.
    public let keySet: [PublicJWK]
    /// What it was loaded from, for the cache's periodic check; `nil` when unknown (always reloaded).
    public var version: AppVersion?
    private let verifiers: [String: Result<any CredentialVerifier, GatewayError>]
    private let minters: [String: Result<any TokenMinter, GatewayError>]

    /// - Parameters:
    ///   - verifiers: per credential type, the verifier, or the error its
    ///     options produced (answered to every request of that type).
    ///   - minters: the same per token profile.
    public init(
        settings: AppSettings, keySet: [PublicJWK] = [],
        verifiers: [String: Result<any CredentialVerifier, GatewayError>],
        minters: [String: Result<any TokenMinter, GatewayError>]
    ) {
        self.settings = settings
        self.keySet = keySet
        self.verifiers = verifiers
        self.minters = minters
    }

    /// The name of the profile a request gets: the one it names, or the
    /// app's first; a 400 naming the app's profiles when the app does not issue it.
    public func profileName(requested: String?) throws(GatewayError) -> String {
        let profiles = settings.tokenProfiles
        guard let requested else { return profiles.first?.type ?? TokenProfileEntry.layer.type }
        guard profiles.contains(where: { $0.type == requested }) else {
            let listed = profiles.map(\.type).joined(separator: ", ")
            throw GatewayError(
                .unsupportedTokenProfile, .invalidRequest, "This app does not issue token profile '\(requested)'; it issues: \(listed).")
        }
        return requested
    }

    /// The minter of `profile` (a name ``profileName(requested:)`` gave), or
    /// why the app cannot issue it now (no active key, settings refused).
    public func minter(for profile: String) throws(GatewayError) -> any TokenMinter {
        guard let slot = minters[profile] else { throw GatewayError.internalError }
        return try slot.get()
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
