public import GatewayCore
public import GatewayPluginKit

/// `credentials.type = "static"`: fixed test users written into a development
/// app's options, for trying the flow before a real user directory exists.
/// Production apps can never use it.
///
/// Options (`plugins.static`):
/// - `users`: `[{user_id, password?, first_name?, last_name?, display_name?, avatar_url?}]`.
///   A listed user with a password must send it; one without needs none.
/// - `allow_any_user` (default `false`): also accept any unlisted user id with
///   no credential at all, as Layer's quick-start sample backend did.
public struct StaticUsersPlugin: CredentialPlugin {
    public let credentialType = "static"

    public init() {}

    /// Offered only where the deployment is in development mode.
    public static func make(_ setup: PluginSetup) -> StaticUsersPlugin? {
        setup.isDevelopment ? StaticUsersPlugin() : nil
    }

    /// Declared: each listed user's password (`users.<index>.password`) is the secret.
    public var optionSchema: OptionSchema? { StaticUsersOptions.schema }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        guard app.environment == .development else {
            throw GatewayError(
                .credentialTypeNotAllowed, .forbidden,
                "Static test users are only available to development apps.")
        }
        return try StaticUsersVerifier(options: StaticUsersOptions(options))
    }
}

struct StaticUsersVerifier: CredentialVerifier {
    let options: StaticUsersOptions
    /// A dictionary lookup and a constant-time comparison.
    let isCheapToAsk = true
    /// A password, as far as the token's reader can tell.
    let authenticationMethods = ["pwd"]

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        guard let userID = attempt.userID else {
            throw GatewayError.invalidRequest("user_id is required for credentials of type static.")
        }
        guard let user = options.users[userID] else {
            return options.allowAnyUser ? .verified(VerifiedIdentity(userID: userID)) : .rejected(reason: "unknown_user")
        }
        if let expected = user.password {
            guard let given = attempt.credentials.fields["password"], ConstantTime.equals(given, expected) else {
                return .rejected(reason: "bad_password")
            }
        }
        return .verified(user.identity)
    }
}
