import Configuration
import Foundation
import GatewayConsole
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayPostgres
import InstalledPlugins
import Logging
import NIOSSL
import SystemPackage

/// The gateway's settings, read once at start from environment variables
/// (`GATEWAY_*`) over an optional YAML file. Every bad value is reported, one
/// line each, before anything starts.
struct GatewayConfiguration: Sendable {
    var databaseURL: String
    var httpHost: String = "127.0.0.1"
    var httpPort: Int = 8080
    /// A connection that sends no request part for this long is closed: idle
    /// keep-alive, or a request head trickled in (slowloris).
    var httpIdleTimeoutSeconds: Int = 75
    /// The slowest request body accepted, after a grace; 0 turns the rule off.
    var httpMinimumBodyBytesPerSecond: Int = 240
    var httpMinimumBodyRateGraceSeconds: Int = 5
    /// Native TLS on the HTTP port; `nil` serves plain HTTP (behind a terminating proxy).
    var tls: TLSConfiguration?
    /// Required by `serve`; `migrate` needs none.
    var masterKey: MasterKey?
    var migrateOnStart: Bool = false
    /// `production` refuses static test users and the `log` SMS sender
    /// deployment-wide; `development` allows them to development apps.
    var mode: DeploymentMode = .production
    var logLevel: Logger.Level = .info
    var logFormat: LogFormat = .json
    var logRequests = true
    /// A port of its own for `/metrics` (9090 in production unless set);
    /// `nil` serves it on the main port.
    var metricsPort: Int?
    var databaseMaxConnections: Int = 20
    /// `SELECT 1` on idle connections this often; 0 never.
    var databaseKeepAliveSeconds: Int = 0
    /// Seeds one operator token on a database that has none.
    var bootstrapAdminToken: AdminTokenSecret?
    var cacheReloadSeconds: Int = 60
    var rateLimits = RateLimitSettings()
    /// Days of audit events to keep; 0 keeps them forever.
    var auditRetentionDays: Int = 0
    var databaseRequestTimeoutMilliseconds: Int = 2000
    /// false only to measure the audit trail's cost: tokens then leave unaudited.
    var auditEnabled = true
    /// Seconds `/readyz` answers 503 before the server stops accepting.
    var shutdownDrainSeconds = 0
    /// Seconds in-flight work may take after a shutdown signal before it is cancelled.
    var shutdownGraceSeconds = 30
    /// The operator console under `/console` (`console.*`).
    var console = ConsoleSettings()
    /// Trace export over OTLP/HTTP (`tracing.*`), off by default.
    var tracing = TracingSettings()
    /// The credential plugins as the settings set them up (their own keys included).
    var plugins = PluginRegistry([])
    /// The settings file and environment, for setting the plugins up again (``everyPlugin()``).
    let reader: ConfigReader

    /// Reads and validates every key; throws ``ConfigurationProblems`` listing each bad one.
    static func load(file: String?, overrides: [String: String] = [:]) async throws -> GatewayConfiguration {
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
        return try GatewayConfiguration(reader: ConfigReader(providers: providers))
    }

    init(reader: ConfigReader) throws {
        self.reader = reader
        var problems: [String] = []

        let databaseURL = Self.secret(reader, "database.url", env: "GATEWAY_DATABASE_URL", &problems)
        if let databaseURL {
            do { _ = try DatabaseURL(databaseURL) } catch { problems.append("database.url (GATEWAY_DATABASE_URL): \(error)") }
        } else {
            problems.append(
                "database.url (GATEWAY_DATABASE_URL) is required (or database.url_file), e.g. postgres://gateway:secret@127.0.0.1:5432/gateway")
        }
        self.databaseURL = databaseURL ?? ""

        let masterKeyText = Self.secret(reader, "master_key", env: "GATEWAY_MASTER_KEY", &problems)
        var masterKey: MasterKey?
        if let masterKeyText {
            do { masterKey = try MasterKey(base64: masterKeyText) } catch {
                problems.append("master_key (GATEWAY_MASTER_KEY): \(error.message)")
            }
        }

        if let previousText = Self.secret(reader, "master_key_previous", env: "GATEWAY_MASTER_KEY_PREVIOUS", &problems) {
            do {
                let previous = try MasterKey(base64: previousText)
                if let current = masterKey {
                    masterKey = current.addingPrevious(previous)
                } else if masterKeyText == nil {
                    problems.append("master_key_previous (GATEWAY_MASTER_KEY_PREVIOUS) is only read with master_key set: it is the key being retired")
                }
            } catch {
                problems.append("master_key_previous (GATEWAY_MASTER_KEY_PREVIOUS): \(error.message)")
            }
        }

        if let host = reader.string(forKey: "http.host") { httpHost = host }
        httpPort = Self.integer(reader, "http.port", env: "GATEWAY_HTTP_PORT", in: 0...65535, default: 8080, &problems)
        httpIdleTimeoutSeconds = Self.integer(
            reader, "http.idle_timeout_seconds", env: "GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS", in: 1...3600, default: 75,
            &problems)
        httpMinimumBodyBytesPerSecond = Self.integer(
            reader, "http.min_body_bytes_per_second", env: "GATEWAY_HTTP_MIN_BODY_BYTES_PER_SECOND", in: 0...1_000_000,
            default: 240, &problems)
        httpMinimumBodyRateGraceSeconds = Self.integer(
            reader, "http.min_body_rate_grace_seconds", env: "GATEWAY_HTTP_MIN_BODY_RATE_GRACE_SECONDS", in: 1...300,
            default: 5, &problems)
        switch (reader.string(forKey: "http.tls.certificate_file"), reader.string(forKey: "http.tls.key_file")) {
        case (nil, nil):
            break
        case (let certificateFile?, let keyFile?):
            do { tls = try ServerTLS.configuration(certificateFile: certificateFile, keyFile: keyFile) } catch {
                problems += error.problems
            }
        default:
            problems.append(
                "http.tls.certificate_file and http.tls.key_file (GATEWAY_HTTP_TLS_CERTIFICATE_FILE, "
                    + "GATEWAY_HTTP_TLS_KEY_FILE) go together: give both for TLS, or neither")
        }
        if let text = reader.string(forKey: "mode") {
            if let parsed = DeploymentMode(rawValue: text.lowercased()) { mode = parsed } else {
                problems.append("mode (GATEWAY_MODE): '\(text)' is not production or development")
            }
        }
        console = ConsoleSettings(
            enabled: Self.boolean(reader, "console.enabled", env: "GATEWAY_CONSOLE_ENABLED", default: true, &problems),
            secureCookie: Self.boolean(
                reader, "console.secure_cookie", env: "GATEWAY_CONSOLE_SECURE_COOKIE",
                default: tls != nil || mode == .production, &problems),
            idleTimeout: .seconds(
                60 * Self.integer(
                    reader, "console.session_idle_minutes", env: "GATEWAY_CONSOLE_SESSION_IDLE_MINUTES", in: 1...1440,
                    default: 30, &problems)),
            lifetime: .seconds(
                3600 * Self.integer(
                    reader, "console.session_hours", env: "GATEWAY_CONSOLE_SESSION_HOURS", in: 1...168, default: 12,
                    &problems)))
        databaseMaxConnections = Self.integer(
            reader, "database.max_connections", env: "GATEWAY_DATABASE_MAX_CONNECTIONS", in: 1...1000, default: 20,
            &problems)
        if reader.string(forKey: "database.min_connections") != nil {
            problems.append(
                "database.min_connections (GATEWAY_DATABASE_MIN_CONNECTIONS) is no longer read: connections open on "
                    + "demand, as the README's database.max_connections says; remove it")
        }
        databaseKeepAliveSeconds = Self.integer(
            reader, "database.keepalive_seconds", env: "GATEWAY_DATABASE_KEEPALIVE_SECONDS", in: 0...3600, default: 0,
            &problems)
        cacheReloadSeconds = Self.integer(
            reader, "cache.reload_seconds", env: "GATEWAY_CACHE_RELOAD_SECONDS", in: 1...86400, default: 60, &problems)
        if let text = Self.secret(reader, "admin.bootstrap_token", env: "GATEWAY_ADMIN_BOOTSTRAP_TOKEN", &problems) {
            let secret = AdminTokenSecret(text: text)
            if secret.isWellFormed { bootstrapAdminToken = secret } else {
                problems.append("admin.bootstrap_token (GATEWAY_ADMIN_BOOTSTRAP_TOKEN): must be 32 to 512 visible ASCII characters")
            }
        }
        migrateOnStart = Self.boolean(reader, "migrate_on_start", env: "GATEWAY_MIGRATE_ON_START", default: false, &problems)
        rateLimits = RateLimitSettings(policies: RateLimitPolicy.gatewayPolicies + credentialPlugins.flatMap { $0.rateLimitPolicies })
        rateLimits.isEnabled = Self.boolean(reader, "rate_limits.enabled", env: "GATEWAY_RATE_LIMITS_ENABLED", default: true, &problems)
        for name in rateLimits.policies.keys.sorted() {
            let env = "GATEWAY_RATE_LIMITS_\(name.uppercased())"
            rateLimits.policies[name]!.limit = Self.integer(
                reader, ConfigKey(["rate_limits", name, "limit"]), env: env + "_LIMIT", in: RateLimitPolicy.limitRange,
                default: rateLimits.policies[name]!.limit, &problems)
            rateLimits.policies[name]!.periodSeconds = Self.integer(
                reader, ConfigKey(["rate_limits", name, "period_seconds"]), env: env + "_PERIOD_SECONDS",
                in: RateLimitPolicy.periodRange, default: rateLimits.policies[name]!.periodSeconds, &problems)
        }
        rateLimits.ipv6PrefixLength = Self.integer(
            reader, "rate_limits.ipv6_prefix_length", env: "GATEWAY_RATE_LIMITS_IPV6_PREFIX_LENGTH",
            in: RateLimitSettings.ipv6PrefixRange, default: rateLimits.ipv6PrefixLength, &problems)
        if let list = reader.string(forKey: "http.trusted_proxies") {
            for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
                if let range = CIDR(entry) { rateLimits.trustedProxies.append(range) } else {
                    problems.append("http.trusted_proxies (GATEWAY_HTTP_TRUSTED_PROXIES): '\(entry)' is not an address or CIDR range")
                }
            }
        }
        auditEnabled = Self.boolean(reader, "audit.enabled", env: "GATEWAY_AUDIT_ENABLED", default: true, &problems)
        auditRetentionDays = Self.integer(
            reader, "audit.retention_days", env: "GATEWAY_AUDIT_RETENTION_DAYS", in: 0...36_500, default: 0, &problems)
        databaseRequestTimeoutMilliseconds = Self.integer(
            reader, "database.request_timeout_ms", env: "GATEWAY_DATABASE_REQUEST_TIMEOUT_MS", in: 100...60_000,
            default: 2000, &problems)
        shutdownDrainSeconds = Self.integer(
            reader, "shutdown.drain_seconds", env: "GATEWAY_SHUTDOWN_DRAIN_SECONDS", in: 0...300, default: 0, &problems)
        shutdownGraceSeconds = Self.integer(
            reader, "shutdown.grace_seconds", env: "GATEWAY_SHUTDOWN_GRACE_SECONDS", in: 1...3600, default: 30, &problems)
        if reader.string(forKey: "metrics.port") != nil {
            metricsPort = Self.integer(
                reader, "metrics.port", env: "GATEWAY_METRICS_PORT", in: 0...65535, default: 9090, &problems)
        } else if mode == .production {
            // Metrics name app ids: in production they stay off the public port unless told otherwise.
            metricsPort = 9090
        }
        logRequests = Self.boolean(reader, "log.requests", env: "GATEWAY_LOG_REQUESTS", default: true, &problems)
        if let format = reader.string(forKey: "log.format") {
            if let parsed = LogFormat(rawValue: format.lowercased()) { logFormat = parsed } else {
                problems.append("log.format (GATEWAY_LOG_FORMAT): '\(format)' is not json or text")
            }
        }
        if let level = reader.string(forKey: "log.level") {
            if let parsed = Logger.Level(rawValue: level.lowercased()) { logLevel = parsed } else {
                problems.append("log.level (GATEWAY_LOG_LEVEL): '\(level)' is not one of trace, debug, info, notice, warning, error, critical")
            }
        }
        tracing = TracingSettings(reader: reader, environment: ProcessInfo.processInfo.environment, problems: &problems)
        plugins = installedPlugins(
            reader: reader, isDevelopment: mode == .development, masterKey: masterKey, problems: &problems)

        guard problems.isEmpty else { throw ConfigurationProblems(problems) }
        self.masterKey = masterKey
    }

    /// Every plugin an app's stored options may name, those this deployment's
    /// mode leaves out included (static test users in production): to
    /// re-seal their secrets.
    func everyPlugin() -> PluginRegistry {
        var ignored: [String] = []
        return installedPlugins(reader: reader, isDevelopment: true, masterKey: masterKey, problems: &ignored)
    }

    /// The master key, or the problem that explains how to give one.
    func requiredMasterKey() throws -> MasterKey {
        guard let masterKey else {
            throw ConfigurationProblems([
                "master_key (GATEWAY_MASTER_KEY) or master_key_file (GATEWAY_MASTER_KEY_FILE) is required: "
                    + "32 random bytes, base64 (generate one with: openssl rand -base64 32)"
            ])
        }
        return masterKey
    }

    /// A secret given inline (`key`) or as a file to read (`key_file`, e.g. a
    /// mounted Kubernetes secret; one trailing newline is dropped).
    private static func secret(
        _ reader: ConfigReader, _ key: String, env: String, _ problems: inout [String]
    ) -> String? {
        if let value = reader.string(forKey: ConfigKey(key), isSecret: true) { return value }
        guard let path = reader.string(forKey: ConfigKey(key + "_file")) else { return nil }
        guard var text = try? String(contentsOfFile: path, encoding: .utf8) else {
            problems.append("\(key)_file (\(env)_FILE): cannot read \(path)")
            return nil
        }
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    static func boolean(
        _ reader: ConfigReader, _ key: ConfigKey, env: String, default value: Bool, _ problems: inout [String]
    ) -> Bool {
        switch reader.string(forKey: key)?.lowercased() {
        case nil: return value
        case "false", "0", "no": return false
        case "true", "1", "yes": return true
        case let other?:
            problems.append("\(key) (\(env)): '\(other)' is not true or false")
            return value
        }
    }

    static func integer(
        _ reader: ConfigReader, _ key: ConfigKey, env: String, in range: ClosedRange<Int>, default value: Int,
        _ problems: inout [String]
    ) -> Int {
        guard let text = reader.string(forKey: key) else { return value }
        guard let number = Int(text), range.contains(number) else {
            problems.append("\(key) (\(env)): '\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
            return value
        }
        return number
    }
}

/// What the deployment is for.
enum DeploymentMode: String {
    case production, development
}

/// Every configuration problem found at start, one per line.
struct ConfigurationProblems: Error, CustomStringConvertible {
    let problems: [String]
    init(_ problems: [String]) { self.problems = problems }
    var description: String { "invalid configuration:\n" + problems.map { "  - \($0)" }.joined(separator: "\n") }
}
