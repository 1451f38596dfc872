public import Foundation

/// Where the gateway is, which app this client signs in to, and how
/// patiently it talks to the gateway.
public struct GatewayClientConfiguration: Sendable {
    /// The gateway's base URL, such as `https://auth.example.com`; routes are
    /// resolved under it (`/v1/identity_tokens`, ...).
    public var gatewayURL: URL
    /// The app's id: `layer:///apps/production/<uuid>` or the bare UUID.
    public var appID: String
    /// What the user would call this device ("Grace's iPhone"), kept with
    /// the session a sign-in starts and shown to the app's admins.
    public var deviceLabel: String?
    /// The token to answer when a call names none: `nil` is the app's first profile.
    public var tokenProfile: TokenProfile?
    /// How long one request may take before it counts as a network failure.
    public var requestTimeout: Duration
    /// How long a refresh whose answer was lost (the connection dropped,
    /// timed out) is sent again with the same refresh token. The gateway
    /// answers such a retry with the same successor within the app's
    /// `sessions.reuse_grace_seconds` (10 s unless the app says otherwise),
    /// so keep this below it; past it, a retry would count as reuse.
    public var refreshRetryWindow: Duration
    /// How long a refresh waits for more challenges before it is sent:
    /// every ``GatewayClient/identityToken(forNonce:profile:)`` call that
    /// comes within it is answered by the same request (up to 64 nonces),
    /// so an app that receives many challenges at launch sends one refresh.
    public var refreshGatheringWindow: Duration

    /// A configuration with the defaults: a 15 s request timeout, an 8 s
    /// refresh retry window and a 10 ms gathering window.
    public init(
        gatewayURL: URL, appID: String, deviceLabel: String? = nil, tokenProfile: TokenProfile? = nil,
        requestTimeout: Duration = .seconds(15), refreshRetryWindow: Duration = .seconds(8),
        refreshGatheringWindow: Duration = .milliseconds(10)
    ) {
        self.refreshGatheringWindow = refreshGatheringWindow
        self.gatewayURL = gatewayURL
        self.appID = appID
        self.deviceLabel = deviceLabel
        self.tokenProfile = tokenProfile
        self.requestTimeout = requestTimeout
        self.refreshRetryWindow = refreshRetryWindow
    }
}

/// Which token the gateway answers: Layer's identity token, or the one
/// another SDK takes. The app must list the profile (`token_profiles`).
public struct TokenProfile: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The profile's name, as the app's `token_profiles` lists it.
    public let rawValue: String
    /// A profile by name, for one this list does not have yet.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Layer's identity token (EIT v1).
    public static let layer = TokenProfile(rawValue: "layer")
    /// An OpenID Connect ID token.
    public static let oidc = TokenProfile(rawValue: "oidc")
    /// A Firebase custom token.
    public static let firebase = TokenProfile(rawValue: "firebase")
    /// A Stream Chat user token.
    public static let stream = TokenProfile(rawValue: "stream")
    /// A Twilio access token.
    public static let twilio = TokenProfile(rawValue: "twilio")

    /// The profile's name.
    public var description: String { rawValue }
}
