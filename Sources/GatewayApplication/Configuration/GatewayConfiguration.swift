import Configuration
import Foundation
import GatewayConsole
public import GatewayCore
import GatewayHTTP
import GatewayPluginKit
public import GatewayRuntime
import GatewayPostgres
import InstalledPlugins
import Logging
import NIOSSL
import SystemPackage

/// The gateway's settings, read once at start from environment variables
/// (`GATEWAY_*`) over an optional YAML file, by area. Every bad value is
/// reported, one line each, before anything starts.
public struct GatewayConfiguration: Sendable {
    /// `production` refuses static test users and the `log` SMS sender
    /// deployment-wide; `development` allows them to development apps.
    public internal(set) var mode: DeploymentMode = .production
    var secrets: SecretSettings
    public internal(set) var http: HTTPSettings
    public internal(set) var database: DatabaseSettings
    public internal(set) var log: LogSettings
    var audit: AuditSettings
    /// Days of audit events the maintenance pass keeps (`audit.retention_days`); `nil` keeps them all.
    public var auditRetentionDays: Int? { audit.retentionDays == 0 ? nil : audit.retentionDays }
    var shutdown: ShutdownSettings
    var cacheReloadSeconds = 60
    var rateLimits: RateLimitSettings
    /// The operator console under `/console` (`console.*`).
    var console: ConsoleSettings
    /// Trace export over OTLP/HTTP (`tracing.*`), off by default.
    var tracing: TracingSettings
    /// The credential plugins as the settings set them up (their own keys included).
    public internal(set) var plugins: PluginRegistry
    /// The settings file and environment, for setting the plugins up again (``everyPlugin()``).
    let settings: SettingsReader

    /// Reads and validates every key; throws ``ConfigurationProblems`` listing each bad one.
    public static func load(file: String?, overrides: [String: String] = [:]) async throws -> GatewayConfiguration {
        var providers: [any ConfigProvider] = [
            InMemoryProvider(values: overrides.reduce(into: [:]) { $0[AbsoluteConfigKey(stringLiteral: $1.key)] = .init(.string($1.value), isSecret: true) }),
            EnvironmentVariablesProvider().prefixKeys(with: "gateway"),
        ]
        let filePath = file ?? ProcessInfo.processInfo.environment["GATEWAY_CONFIG_FILE"]
        if let filePath {
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(filePath)))
            } catch {
                throw ConfigurationProblems(["config file \(filePath): \(error)"])
            }
        }
        return try GatewayConfiguration(SettingsReader(reader: ConfigReader(providers: providers)))
    }

    init(_ settings: SettingsReader) throws {
        self.settings = settings
        mode = settings.choice("mode", default: mode, oneOf: "production or development")
        database = DatabaseSettings(settings)
        secrets = SecretSettings(settings)
        http = HTTPSettings(settings, mode: mode)
        console = ConsoleSettings(settings, mode: mode, servesTLS: http.tls != nil)
        cacheReloadSeconds = settings.integer("cache.reload_seconds", in: 1...86400, default: cacheReloadSeconds)
        rateLimits = RateLimitSettings(
            settings, policies: RateLimitPolicy.gatewayPolicies + credentialPlugins.flatMap { $0.rateLimitPolicies })
        audit = AuditSettings(settings)
        shutdown = ShutdownSettings(settings)
        log = LogSettings(settings)
        tracing = TracingSettings(settings)
        plugins = installedPlugins(settings, isDevelopment: mode == .development, masterKey: secrets.masterKey)
        guard settings.problems.isEmpty else { throw ConfigurationProblems(settings.problems) }
    }

    /// Every plugin an app's stored options may name, those this deployment's
    /// mode leaves out included (static test users in production): to
    /// re-seal their secrets. Their settings were checked at start.
    public func everyPlugin() -> PluginRegistry {
        installedPlugins(settings, isDevelopment: true, masterKey: secrets.masterKey)
    }

    /// The master key, or the problem that explains how to give one.
    public func requiredMasterKey() throws -> MasterKey {
        guard let masterKey = secrets.masterKey else {
            throw ConfigurationProblems([
                "master_key (GATEWAY_MASTER_KEY) or master_key_file (GATEWAY_MASTER_KEY_FILE) is required: "
                    + "32 random bytes, base64 (generate one with: openssl rand -base64 32)"
            ])
        }
        return masterKey
    }
}

/// What the deployment is for.
public enum DeploymentMode: String, Sendable {
    case production, development
}

/// Every configuration problem found at start, one per line.
public struct ConfigurationProblems: Error, CustomStringConvertible {
    public let problems: [String]
    public init(_ problems: [String]) { self.problems = problems }
    public var description: String { "invalid configuration:\n" + problems.map { "  - \($0)" }.joined(separator: "\n") }
}
