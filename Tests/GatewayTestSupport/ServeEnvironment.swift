import GatewayCore

/// The environment of `identity-gateway serve` on a test database: a fresh
/// master key, any free port, migrations on start, `bootstrap` as the first
/// operator token, development mode. Suites add or replace what they test.
/// - Parameter databaseTimeoutMs: short where the test is about timing out;
///   otherwise long, so a loaded CI machine does not turn waits into 503s.
public func serveEnvironment(_ url: String, bootstrap: String, databaseTimeoutMs: Int = 10_000) -> [String: String] {
    [
        "GATEWAY_DATABASE_URL": url, "GATEWAY_MASTER_KEY": MasterKey.generateBase64(), "GATEWAY_HTTP_PORT": "0",
        "GATEWAY_MIGRATE_ON_START": "true", "GATEWAY_ADMIN_BOOTSTRAP_TOKEN": bootstrap,
        "GATEWAY_DATABASE_REQUEST_TIMEOUT_MS": "\(databaseTimeoutMs)", "GATEWAY_MODE": "development",
    ]
}
