public import GatewayCore
public import Hummingbird

/// The seam every token profile implements: one dialect of token (Layer's,
/// an OpenID Connect ID token, a Firebase custom token, ...) minted from the
/// same verified identity. One folder under `Profiles/` and one registration
/// line (CONTRIBUTING.md), as credential plugins are; the token path asks
/// the app's minter and never names a profile.
public protocol TokenProfile: Sendable {
    /// The profile as this deployment sets it up, or `nil` where it is not offered.
    static func make(_ setup: PluginSetup) -> Self?

    /// The `type` of the app's `token_profiles` entry, and the request's `token_profile`, e.g. `"oidc"`.
    var name: String { get }

    /// Builds the minter for one app from the app's settings for this profile
    /// (its `token_profiles` entry without `type`), secrets opened, and the
    /// app's keys. Called when an app is loaded or changed, never per request.
    ///
    /// Throw ``GatewayError``: a 400 naming the bad setting (the admin API
    /// answers it when the settings are written), or `no_signing_key` where
    /// the profile signs with the app's key and it has none active.
    func makeMinter(
        for app: AppSettings, settings: [String: JSONValue], keys: AppSigningKeys
    ) throws(GatewayError) -> any TokenMinter

    /// `settings` with each secret string replaced by `transform(name, value)`:
    /// how secrets are redacted for answers and sealed at rest.
    func mapSecrets(
        _ settings: [String: JSONValue], _ transform: (_ name: String, _ value: String) throws -> String
    ) rethrows -> [String: JSONValue]

    /// Public routes of the profile's own (an issuer's discovery document, say).
    func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices)

    /// Why this deployment cannot mint the profile at all (a setting of the
    /// operator's missing), or `nil`. A production gateway refuses to start
    /// while an app lists a profile it cannot mint.
    var unavailableReason: String? { get }

    /// Its settings (the `token_profiles` entry without `type`), declared
    /// as a plugin declares its options: checked by the admin API before
    /// ``makeMinter(for:settings:keys:)``, published in `openapi.yaml`, and
    /// rendered by the console. Its secrets are named in ``mapSecrets(_:_:)``.
    var optionFields: [OptionField] { get }

    /// What the profile is, for the API document and the console.
    var summary: String? { get }
}

extension TokenProfile {
    public func mapSecrets(
        _ settings: [String: JSONValue], _ transform: (_ name: String, _ value: String) throws -> String
    ) rethrows -> [String: JSONValue] { settings }

    public func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices) {}

    public var unavailableReason: String? { nil }

    public var summary: String? { nil }
}
