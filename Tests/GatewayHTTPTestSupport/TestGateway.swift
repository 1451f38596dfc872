import Foundation
public import GatewayCore
public import GatewayHTTP
public import GatewayPluginKit
public import GatewayRuntime
public import GatewayPostgres
import GatewayPluginPostgres
public import GatewayTestSupport
public import HTTPTypes
public import Hummingbird
public import HummingbirdTesting
public import Logging
import OpenSSLSigner
public import PostgresNIO
import StaticUsersPlugin
import Testing

/// A gateway router over a fresh test database, with helpers to create apps:
/// what the gateway's and each plugin's integration tests drive.
public struct TestGateway: GatewayUnderTest {
    /// Static test users only: each plugin's tests pass a registry with their plugin.
    public static let staticUsersOnly = PluginRegistry([StaticUsersPlugin()])

    public let client: PostgresClient
    public let masterKey: MasterKey
    public let tenants: TenantCache
    public let dependencies: GatewayDependencies
    /// The request ledger the router writes to, for its statistics and backlog.
    public let ledger: PostgresRequestLedger
    /// What counts this gateway's signatures, where the test asked (``with(plugins:rateLimits:logger:auditWriteTimeout:signatures:frontEnds:_:)``).
    public let signatures: SignatureCount?
    public let application: Application<RouterResponder<GatewayRequestContext>>
    /// The test database, for a second instance (``withReplica(_:)``).
    public let databaseURL: String

    /// What makes pages over the admin API (the console) from the gateway's stores and master key.
    public typealias FrontEnds = @Sendable (GatewayStores, MasterKey) throws -> [any AdminAPIFrontEnd]

    /// A gateway over a fresh database, with its audit writer running.
    public static func with(
        plugins: PluginRegistry = staticUsersOnly, rateLimits: RateLimitSettings = RateLimitSettings(),
        logger: Logger = TestDatabase.logger, auditWriteTimeout: Duration = .seconds(20), signatures: SignatureCount? = nil,
        frontEnds: FrontEnds = { _, _ in [] },
        _ body: @Sendable (TestGateway) async throws -> Void
    ) async throws {
        try await TestDatabase.with(migrations: Migration.core + plugins.migrations) { client, url in
            let masterKey = try MasterKey(base64: MasterKey.generateBase64())
            try await run(
                client: client, databaseURL: url, masterKey: masterKey, rateLimits: rateLimits, plugins: plugins,
                logger: logger, auditWriteTimeout: auditWriteTimeout, signatures: signatures, frontEnds: frontEnds, body)
        }
    }

    /// A second gateway on the same database, as another replica would be:
    /// its own connections, tenant cache and audit writer, the same settings.
    public func withReplica(_ body: @Sendable (TestGateway) async throws -> Void) async throws {
        try await TestDatabase.withClient(databaseURL) { [self] client in
            try await Self.run(
                client: client, databaseURL: databaseURL, masterKey: masterKey, rateLimits: dependencies.rateLimits,
                plugins: dependencies.plugins, logger: dependencies.logger, auditWriteTimeout: .seconds(20),
                signatures: signatures, body)
        }
    }

    private static func run(
        client: PostgresClient, databaseURL: String, masterKey: MasterKey, rateLimits: RateLimitSettings,
        plugins: PluginRegistry, logger: Logger, auditWriteTimeout: Duration, signatures: SignatureCount?,
        frontEnds: FrontEnds = { _, _ in [] }, _ body: @Sendable (TestGateway) async throws -> Void
    ) async throws {
        // Generous timeouts: a loaded CI machine must not turn slow steps into 503s (timing out is
        // tested against a real outage in ResilienceTests). Tests that hold audit writes back on
        // purpose shorten only those. 10 s was passed in full runs on two cores: a fresh clone's
        // run answered 14 of a parallel attack's lookups 503.
        let timeout = Duration.seconds(20)
        let ledger = PostgresRequestLedger(client: client, logger: logger, timeout: auditWriteTimeout)
        let stores = GatewayStores.postgres(client: client, ledger: ledger, logger: logger, databaseRetry: .once(within: timeout))
        let dependencies = GatewayDependencies(
            stores: stores, pluginStorage: .postgres(client), plugins: plugins, masterKey: masterKey,
            makeSigner: { try signatures?.signer($0) ?? OpenSSLRS256Signer($0) },
            options: .init(
                rateLimits: rateLimits, databaseRetry: .once(within: timeout), signers: .sharedByTests,
                frontEnds: try frontEnds(stores, masterKey)),
            logger: logger)
        let gateway = TestGateway(
            client: client, masterKey: masterKey, tenants: dependencies.tenants, dependencies: dependencies,
            ledger: ledger, signatures: signatures, application: Application(router: GatewayRouter.make(dependencies), logger: logger),
            databaseURL: databaseURL)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await ledger.run() }
            // The background work (the outbox's deliveries, the sweep of user changes), as the server runs it.
            group.addTask {
                await plugins.runInBackground(
                    BackgroundServices(plugin: dependencies.pluginServices, tenants: dependencies.tenants))
            }
            group.addTask { await dependencies.userLifecycle.sweepUntilCancelled() }
            defer { group.cancelAll() }
            try await body(gateway)
        }
    }

    /// A development app with static users alice/wonderland (with a profile)
    /// and bob (no password), and an active key; `configure` may change it first.
    @discardableResult
    public func createApp(activeKey: Bool = true, _ configure: (inout AppSettings) -> Void = { _ in }) async throws -> AppSettings {
        var app = Self.staticUsersApp()
        configure(&app)
        try await AppRepository(client: client, logger: TestDatabase.logger).insert(app)
        if activeKey {
            try await AppKeyRepository(client: client, logger: TestDatabase.logger).insert(
                StoredKey(appID: app.appID, keyID: Self.keyID(of: app), status: .active, pair: TestKeys.shared, masterKey: masterKey))
        }
        return app
    }

    /// What ``createApp(activeKey:_:)`` stores (``MemoryGateway`` too): a
    /// development app whose static users are alice/wonderland, with a
    /// profile, and bob, with no password.
    public static func staticUsersApp() -> AppSettings {
        AppSettings(
            appID: AppID(uuid: UUID()), name: "Test app", environment: .development,
            providerID: ProviderID(uuid: UUID()), tokenTTLSeconds: 300, credentialTypes: ["static"],
            plugins: [
                "static": .object([
                    "users": .array([
                        .object([
                            "user_id": .string("alice"), "password": .string("wonderland"),
                            "first_name": .string("Alice"), "display_name": .string("Alice L."),
                            "avatar_url": .string("https://example.com/alice.png"),
                        ]),
                        .object(["user_id": .string("bob")]),
                    ])
                ])
            ])
    }

    /// The key id `createApp` gives an app's key: derived from the app id, so tests can predict it.
    public static func keyID(of app: AppSettings) -> KeyID {
        var bytes = app.appID.uuid.uuid
        bytes.0 ^= 0xFF
        return KeyID(uuid: UUID(uuid: bytes))
    }

    /// Runs `body` with a client of the router (no sockets), or over a real
    /// connection to a running server with `.live`.
    public func test<Value: Sendable>(
        over setup: TestingSetup = .router, _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        try await application.test(setup, body)
    }

    public var pluginServices: PluginServices { dependencies.pluginServices }

    /// Every audit row, oldest first, as (request_id, event, reason, user_id, whole row as text).
    public func auditRows() async throws -> [AuditRow] {
        let rows = try await client.query(
            "SELECT request_id, event, reason, user_id, audit_events::text FROM audit_events ORDER BY id",
            logger: TestDatabase.logger)
        var result: [(String, String, String?, String?, String)] = []
        for try await row in rows.decode((String, String, String?, String?, String).self) { result.append(row) }
        return result.map { (requestID: $0.0, event: $0.1, reason: $0.2, userID: $0.3, text: $0.4) }
    }

    /// Runs `body` while writes to `audit_events` wait for a lock (reads go on), as when PostgreSQL is slow.
    public func whileAuditWritesWait<Result: Sendable>(_ body: @Sendable () async throws -> Result) async throws -> Result {
        try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: TestDatabase.logger)
            try await connection.query("LOCK TABLE audit_events IN SHARE MODE", logger: TestDatabase.logger)
            let result = try await body()
            try await connection.query("COMMIT", logger: TestDatabase.logger)
            return result
        }
    }

    /// The rows of one request, once the ledger keeps none in memory and one of them is `event`.
    public func auditRowsOnceWritten(
        requestID: String, event: String
    ) async throws -> [AuditRow] {
        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            let rows = try await auditRows().filter { $0.requestID == requestID }
            let done = ledger.keptCount == 0 && rows.contains { $0.event == event }
            if done || ContinuousClock.now > deadline { return rows }
            try await Task.sleep(for: .milliseconds(50))  // polling: the kept rows are retried on their own schedule
        }
    }

    public func age(session sessionID: String, by seconds: Int) async throws {
        try await client.query(
            """
            UPDATE sessions SET rotated_at = rotated_at - \(seconds) * interval '1 second',
                created_at = created_at - \(seconds) * interval '1 second',
                last_used_at = last_used_at - \(seconds) * interval '1 second',
                idle_expires_at = idle_expires_at - \(seconds) * interval '1 second',
                expires_at = expires_at - \(seconds) * interval '1 second'
            WHERE session_id = \(UUID(uuidString: sessionID)!)
            """, logger: TestDatabase.logger)
    }

    public func end(session sessionID: String, _ end: SessionEnd) async throws {
        let id = UUID(uuidString: sessionID)!
        switch end {
        case .idle:
            try await client.query(
                "UPDATE sessions SET idle_expires_at = now() - interval '1 second' WHERE session_id = \(id)",
                logger: TestDatabase.logger)
        case .absolute:
            try await client.query(
                "UPDATE sessions SET expires_at = now() - interval '1 second' WHERE session_id = \(id)",
                logger: TestDatabase.logger)
        }
    }

    public func sessionState(_ sessionID: String) async throws -> SessionState? {
        let rows = try await client.query(
            """
            SELECT generation, revoked_reason, NOT (revoked_at IS NULL AND expires_at > now() AND idle_expires_at > now())
            FROM sessions WHERE session_id = \(UUID(uuidString: sessionID)!)
            """, logger: TestDatabase.logger)
        for try await (generation, reason, ended) in rows.decode((Int64, String?, Bool).self) {
            return SessionState(generation: generation, revokedReason: reason, ended: ended)
        }
        return nil
    }
}

extension TestClientProtocol {
    /// POSTs `object` as JSON to `path`.
    public func postJSON(_ object: [String: any Sendable], to path: String = "/v1/identity_tokens", headers: HTTPFields = [:]) async throws
        -> TestResponse
    {
        var headers = headers
        headers[.contentType] = "application/json"
        let body = try JSONSerialization.data(withJSONObject: object)
        return try await execute(uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    /// POSTs raw bytes with a content type.
    public func post(_ path: String = "/v1/identity_tokens", contentType: String?, body: String) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let contentType { headers[.contentType] = contentType }
        return try await execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: body))
    }
}

/// A token request body for `app` as alice with her password.
public func aliceRequest(_ app: AppSettings, nonce: String = "abc+/=123") -> [String: any Sendable] {
    [
        "app_id": "layer:///apps/staging/\(app.appID)", "user_id": "alice", "nonce": nonce,
        "credentials": ["type": "static", "password": "wonderland"],
    ]
}

/// A successful response's token, or nil.
public func identityToken(in response: TestResponse) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
    else { return nil }
    return object["identity_token"] as? String
}

/// The members of a JSON error body.
public func errorBody(_ response: TestResponse) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
    return try #require(object as? [String: Any])
}

extension PluginServices {
    /// The same services, their database steps waiting as `retry` says.
    public func retrying(_ retry: DatabaseRetry) -> PluginServices {
        PluginServices(
            storage: storage, apps: apps, sessions: sessions, userChanges: userChanges, logger: logger, databaseRetry: retry)
    }
}
