import Foundation
public import PostgresNIO

/// Reads a `postgres://user:password@host:port/database?sslmode=...` URL into
/// PostgresClient's configuration. `sslmode` is `disable`, `prefer` (default)
/// or `require`; a `host` query item naming a directory selects a Unix socket.
public struct DatabaseURL: Sendable, CustomStringConvertible {
    public let configuration: PostgresClient.Configuration
    /// Whether the connection must be encrypted: `sslmode=require`, or a
    /// Unix socket (which never leaves the host). `prefer` falls back to
    /// plain text without a word, so it is not counted.
    public let isConfidential: Bool
    /// The URL with the password masked, fit for logs.
    public let description: String
    /// How long a connection may sit unused before the pool closes it.
    public static let connectionIdleTimeout = Duration.seconds(10)

    /// - Parameters:
    ///   - keepAliveSeconds: how often an idle connection runs `SELECT 1`; 0 never.
    ///   - applicationName: what the connections announce to PostgreSQL (`pg_stat_activity`).
    public init(
        _ text: String, maximumConnections: Int = 20, keepAliveSeconds: Int = 30,
        applicationName: String = "identity-gateway"
    ) throws {
        guard let components = URLComponents(string: text),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            throw DatabaseURLError("the database URL must look like postgres://user:password@host:5432/database")
        }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let username = components.percentEncodedUser?.removingPercentEncoding ?? "postgres"
        let password = components.percentEncodedPassword?.removingPercentEncoding
        var database = components.path
        if database.hasPrefix("/") { database.removeFirst() }

        var configuration: PostgresClient.Configuration
        if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
            let port = components.port ?? 5432
            configuration = .init(
                unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: username, password: password,
                database: database.isEmpty ? nil : database)
        } else {
            guard let host = components.host, !host.isEmpty else {
                throw DatabaseURLError("the database URL names no host")
            }
            let tls: PostgresClient.Configuration.TLS
            switch query["sslmode"] ?? "prefer" {
            case "disable": tls = .disable
            case "prefer": tls = .prefer(.makeClientConfiguration())
            case "require": tls = .require(.makeClientConfiguration())
            case let other: throw DatabaseURLError("sslmode '\(other)' is not one of disable, prefer, require")
            }
            configuration = .init(
                host: host, port: components.port ?? 5432, username: username, password: password,
                database: database.isEmpty ? nil : database, tls: tls)
        }
        isConfidential = query["host"]?.hasPrefix("/") == true || query["sslmode"] == "require"
        configuration.options.maximumConnections = maximumConnections
        // No connections kept open at all times: PostgresNIO 1.33's pool asserts that the kept ones are always
        // there, and a connection that closes (PostgreSQL restarted or failed over, a backend terminated) while
        // a request waits for one breaks that and stops the process. Every returned connection then arms an
        // idle timer, and a cancelled timer holds memory until it would have fired: a short idle timeout keeps
        // that small.
        configuration.options.minimumConnections = 0
        configuration.options.connectionIdleTimeout = Self.connectionIdleTimeout
        configuration.options.keepAliveBehavior = keepAliveSeconds > 0 ? .init(frequency: .seconds(keepAliveSeconds)) : nil
        // Every commit on disk before it is acknowledged, whatever the server's default
        // (see DurabilityCheck): an answered token's audit row must survive a crash.
        configuration.options.additionalStartupParameters = [
            ("application_name", applicationName), ("synchronous_commit", "on"),
        ]
        self.configuration = configuration

        var masked = components
        if masked.password != nil { masked.password = "***" }
        self.description = masked.string ?? "postgres://***"
    }
}

public struct DatabaseURLError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
