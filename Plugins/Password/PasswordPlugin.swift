public import GatewayCore
import GatewayCourier
public import GatewayPluginKit
public import Hummingbird

/// `credentials.type = "password"`: each app's own user directory in
/// Postgres, argon2id hashes, managed under `/admin/v1/apps/{app_id}/users`.
///
/// Options (`plugins.password`, all optional):
/// - `argon2`: `{memory_kib, iterations}` for new hashes (default OWASP's
///   19456 KiB and 2 passes; bounds 8192..262144 and 1..10). Stored hashes
///   with other parameters are rehashed at the user's next login.
/// - `min_length`: the shortest password (characters) a write may set, 8..128.
/// - `human_check`: a CAPTCHA asked before the password is checked (docs/plugins.md).
public struct PasswordPlugin: CredentialPlugin {
    static let type = "password"
    public let credentialType = type
    /// Where hashing runs; shared by logins and admin writes.
    public let hasher: PasswordHasher
    /// How long a login's `last_login_at` waits in memory to share one write
    /// with the app's other logins (``LastLoginWriter``).
    public let lastLoginDelay: Duration
    /// Every app's `last_login_at` notes not yet written.
    let pendingLastLogins = PendingLastLogins()

    public init(hasher: PasswordHasher = PasswordHasher(), lastLoginDelay: Duration = .seconds(1)) {
        self.hasher = hasher
        self.lastLoginDelay = lastLoginDelay
    }

    /// The hasher's limits come from the `password.*` settings (docs/configuration.md).
    public static func make(_ setup: PluginSetup) -> PasswordPlugin? {
        let settings = setup.settings
        let concurrency = settings.integer("password.hash_concurrency", in: 0...256, default: 0)
        let memoryMiB = settings.integer("password.hash_memory_mib", in: 0...1_048_576, default: 0)
        let limits = PasswordHasher.Limits(
            concurrency: concurrency == 0 ? nil : concurrency,
            queueLimit: settings.integer("password.hash_queue_limit", in: 0...100_000, default: 64),
            maximumMemoryKiB: settings.integer(
                "password.max_memory_kib", in: 8_192...1_048_576, default: PasswordHasher.Limits.defaultMaximumMemoryKiB),
            maximumIterations: settings.integer(
                "password.max_iterations", in: 1...32, default: PasswordHasher.Limits.defaultMaximumIterations),
            memoryBudgetKiB: memoryMiB == 0 ? nil : memoryMiB * 1024,
            maximumBcryptCost: settings.integer(
                "password.max_bcrypt_cost", in: 4...15, default: PasswordHasher.Limits.defaultMaximumBcryptCost))
        let lastLoginDelay = Duration.milliseconds(settings.integer("password.last_login_delay_ms", in: 10...60_000, default: 1_000))
        return PasswordPlugin(hasher: PasswordHasher(limits: limits), lastLoginDelay: lastLoginDelay)
    }

    public var optionSchema: OptionSchema? { PasswordOptions.schema }

    public var migrations: [Migration] {
        embeddedMigrations.map { Migration(source: "password", name: $0.name, sql: $0.text) }
    }

    /// An app admin may tighten `human_check`; loosening it is an operator's.
    public func loosening(_ options: JSONValue, from stored: JSONValue, in app: AppSettings) -> String? {
        // The check alone: the comparison must not hang on an argon2 ceiling an operator lowered since.
        let path = "plugins.password.human_check"
        func check(_ options: JSONValue) -> SendProtection? {
            guard let input = try? JSONInput(options, path: "plugins.password") else { return nil }
            guard let object = try? input.object("human_check") else { return input.has("human_check") ? nil : SendProtection() }
            return (try? SendProtection.readHumanCheck(object, path: path)).map { SendProtection(humanCheck: $0) }
        }
        guard let now = check(options), let was = check(stored) else { return nil }
        return now.loosening(of: was).map { "plugins.password.\($0)" }
    }

    public func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        try userDirectory(for: app, services: services).verifier
    }

    /// Writes the logins noted in the last second, which would otherwise wait for their writer's delay.
    public func finish() async {
        await pendingLastLogins.flushAll()
    }

    public func addAdminRoutes(to admin: RouterGroup<GatewayRequestContext>, services: RouteServices) {
        UserAdminController(
            apps: services.plugin.apps, users: services.plugin.passwordUsers, lifecycle: services.userLifecycle,
            hasher: hasher, work: services.adminWork
        ).addRoutes(to: admin)
    }
}
