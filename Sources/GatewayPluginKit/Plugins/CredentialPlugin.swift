public import GatewayCore
public import Hummingbird

/// The seam every credential plugin implements: one folder under `Plugins/`
/// and one registration line (CONTRIBUTING.md). A plugin names the
/// `credentials.type` it answers, owns its settings keys, migrations, rate-limit
/// policies, error codes and routes, and builds one verifier per app from
/// that app's options.
public protocol CredentialPlugin: Sendable {
    /// The plugin as this deployment sets it up, or `nil` where it is not
    /// offered (static test users in production).
    static func make(_ setup: PluginSetup) -> Self?

    /// The rate-limit policies this plugin's routes and verifiers count, with
    /// their defaults. Operators change them under `rate_limits.<name>`, as
    /// the gateway's own, and apps override them the same way.
    static var rateLimitPolicies: [RateLimitPolicy] { get }

    /// The `credentials.type` value this plugin verifies, e.g. `"password"`.
    var credentialType: String { get }

    /// Schema changes for this plugin's own tables, applied after the core ones.
    var migrations: [Migration] { get }

    /// The plugin's options, declared once (``OptionSchema``): the admin API
    /// checks an app's options against it before ``makeVerifier(for:options:services:)``
    /// reads them, `openapi.yaml` publishes it, and the console renders it as
    /// a form. `nil` (the default): the plugin checks its options alone and
    /// the console edits them as JSON.
    var optionSchema: OptionSchema? { get }

    /// Builds the verifier for one app from the app's options for this plugin
    /// (`plugins[credentialType]`, `.null` when absent). Called when an app is
    /// loaded or changed, never per request.
    ///
    /// Throw ``GatewayError`` to refuse: the error names the bad option, or
    /// says why this app may not use the plugin at all.
    func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier

    /// Adds the plugin's own admin routes (its user directory, say) to the
    /// `/admin/v1` group, behind admin-token authentication.
    func addAdminRoutes(to admin: RouterGroup<GatewayRequestContext>, services: RouteServices)

    /// Adds public routes a client calls before asking for a token
    /// (`POST /v1/phone_codes`, say).
    func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices)

    /// `options` with each secret string (a webhook secret, a test user's
    /// password) replaced by `transform(path, value)`, `path` naming it
    /// within the options (`sender.secret`, `users.0.password`). How secrets
    /// are redacted for answers and sealed at rest (``PluginRegistry``).
    func mapSecrets(
        _ options: JSONValue, _ transform: (_ path: String, _ value: String) throws -> String
    ) rethrows -> JSONValue

    /// The first of `options`' settings that is looser than in `stored` (the
    /// app's current options), by its path, where only an operator may
    /// loosen it (a send protection); nil when nothing is loosened. An app
    /// admin's change that loosens one is refused 403.
    func loosening(_ options: JSONValue, from stored: JSONValue, in app: AppSettings) -> String?

    /// Work the plugin does beside the requests for as long as the gateway
    /// serves (delivering its outbox's messages), on every replica; the task
    /// is cancelled at shutdown once the HTTP server has answered its last
    /// request, and the work returns when it is.
    func runInBackground(_ services: BackgroundServices) async

    /// Called once as the gateway stops, after the HTTP server has answered
    /// its last request and before the database connections close: writes
    /// what the plugin holds in memory for later (the password plugin's
    /// `last_login_at` notes).
    func finish() async
}

/// How the admin API shows a plugin's secrets: write-only, so a write must
/// send the secret itself again, and the marker is never taken for one.
public enum RedactedSecret {
    public static let marker = "********"
}

extension CredentialPlugin {
    public static var rateLimitPolicies: [RateLimitPolicy] { [] }

    public var migrations: [Migration] { [] }

    public var optionSchema: OptionSchema? { nil }

    public func addAdminRoutes(to admin: RouterGroup<GatewayRequestContext>, services: RouteServices) {}

    public func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices) {}

    /// The secrets ``optionSchema`` declares; none without one.
    public func mapSecrets(
        _ options: JSONValue, _ transform: (_ path: String, _ value: String) throws -> String
    ) rethrows -> JSONValue {
        guard let optionSchema else { return options }
        return try optionSchema.mapSecrets(options, transform)
    }

    public func loosening(_ options: JSONValue, from stored: JSONValue, in app: AppSettings) -> String? { nil }

    public func runInBackground(_ services: BackgroundServices) async {}

    public func finish() async {}
}
