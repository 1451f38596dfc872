import Foundation
public import GatewayCore
public import GatewayPostgres
public import Logging
public import PostgresNIO

/// A fresh database on the test cluster for one test, dropped afterwards.
///
/// The cluster comes from `GATEWAY_TEST_DATABASE_URL`, which `./scripts/test`
/// sets after starting a throwaway PostgreSQL. Without it, database tests
/// fail under `./scripts/test` (never skipped silently in CI) and are
/// cancelled, with one line saying why, in a plain `swift test`.
public enum TestDatabase {
    public static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }()

    /// The URL of the test cluster's maintenance database (``SuiteEnvironment``:
    /// without one, the test fails under `./scripts/test` and is cancelled in a plain `swift test`).
    public static func clusterURL() throws -> String {
        try SuiteEnvironment.value("GATEWAY_TEST_DATABASE_URL")
    }

    /// Creates an empty database, migrated unless `migrations` is empty, runs
    /// `body` with a running client on it, then drops it.
    public static func with<Result: Sendable>(
        migrations: [Migration] = Migration.core,
        _ body: @Sendable (_ client: PostgresClient, _ url: String) async throws -> Result
    ) async throws -> Result {
        let clusterURL = try clusterURL()
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try await withClient(clusterURL) { admin in
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        let url = replacingDatabase(in: clusterURL, with: name)
        do {
            let result = try await withClient(url) { client in
                if !migrations.isEmpty {
                    try await MigrationRunner(client: client, logger: logger).run(migrations)
                }
                return try await body(client, url)
            }
            try await drop(name, clusterURL: clusterURL)
            return result
        } catch {
            try? await drop(name, clusterURL: clusterURL)
            throw error
        }
    }

    /// Runs `body` with a client that is running, and shuts it down after.
    @discardableResult
    public static func withClient<Result: Sendable>(
        _ url: String, _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: try DatabaseURL(url).configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    private static func drop(_ name: String, clusterURL: String) async throws {
        try await withClient(clusterURL) { admin in
            try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
        }
    }

    private static func replacingDatabase(in url: String, with name: String) -> String {
        var components = URLComponents(string: url)!
        components.path = "/" + name
        return components.string!
    }
}
