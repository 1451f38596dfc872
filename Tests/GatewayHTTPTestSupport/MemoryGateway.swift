public import Foundation
public import GatewayCore
public import GatewayHTTP
public import GatewayPluginKit
public import GatewayRuntime
public import GatewayTestSupport
public import HTTPTypes
public import Hummingbird
public import HummingbirdTesting
public import Logging
import NIOCore
import OpenSSLSigner
import PostgresNIO
import StaticUsersPlugin
import Testing

/// The gateway's router over ``InMemoryStores``: the HTTP layer, tested
/// without a database. What PostgreSQL itself guarantees (locks, group
/// commit, failover) stays in the integration tests. Its helpers are
/// ``TestGateway``'s, so a test of the HTTP layer reads the same over either.
public struct MemoryGateway: GatewayUnderTest {
    public let memory = InMemoryStores()
    public let masterKey = try! MasterKey(base64: MasterKey.generateBase64())
    public let application: Application<RouterResponder<GatewayRequestContext>>
    /// What its plugins are lent: the in-memory apps, and their tables in memory beside them.
    public let pluginServices: PluginServices
    public let tenants: TenantCache
    /// What the router was made of.
    public let dependencies: GatewayDependencies

    public init(rateLimits: RateLimitSettings = RateLimitSettings(), plugins: [any CredentialPlugin]) {
        self.init(rateLimits: rateLimits, plugins: PluginRegistry(plugins))
    }

    public init(
        rateLimits: RateLimitSettings = RateLimitSettings(), plugins: PluginRegistry = TestGateway.staticUsersOnly,
        logger: Logger = Logger(label: "memory-gateway"), frontEnds: TestGateway.FrontEnds = { _, _ in [] }
    ) {
        let stores = memory.stores
        let memory = self.memory
        // Timeouts as generous as TestGateway's: a loaded machine must not turn slow steps into 503s.
        let timeout = Duration.seconds(10)
        let mounted: [any AdminAPIFrontEnd]
        do {
            mounted = try frontEnds(stores, masterKey)
        } catch {
            // Failed loudly: a front end that did not build would otherwise answer 404 to every page.
            Issue.record("the front ends did not build: \(error)")
            mounted = []
        }
        let dependencies = GatewayDependencies(
            stores: stores, pluginStorage: .memory(PluginMemory(recording: { try memory.record($0) })), plugins: plugins,
            masterKey: masterKey, makeSigner: { try OpenSSLRS256Signer($0) },
            options: .init(
                rateLimits: rateLimits, databaseRetry: .once(within: timeout), signers: .sharedByTests, logsRequests: false,
                frontEnds: mounted),
            logger: logger)
        self.dependencies = dependencies
        pluginServices = dependencies.pluginServices
        tenants = dependencies.tenants
        application = Application(router: GatewayRouter.make(dependencies), logger: logger)
    }

    /// Runs `body` with a fresh gateway, as ``TestGateway/with(plugins:rateLimits:logger:auditWriteTimeout:frontEnds:_:)`` does.
    public static func with(
        plugins: PluginRegistry = TestGateway.staticUsersOnly, rateLimits: RateLimitSettings = RateLimitSettings(),
        logger: Logger = Logger(label: "memory-gateway"), frontEnds: TestGateway.FrontEnds = { _, _ in [] },
        _ body: @Sendable (MemoryGateway) async throws -> Void
    ) async throws {
        try await body(MemoryGateway(rateLimits: rateLimits, plugins: plugins, logger: logger, frontEnds: frontEnds))
    }

    /// An app as ``TestGateway/createApp(activeKey:_:)`` makes it, in the memory stores.
    @discardableResult
    public func createApp(activeKey: Bool = true, _ configure: (inout AppSettings) -> Void = { _ in }) async throws -> AppSettings {
        var app = TestGateway.staticUsersApp()
        configure(&app)
        let setup = AuditEvent(appID: app.appID, event: "test.setup", outcome: .success, requestID: "setup")
        #expect(try await memory.stores.apps.create(app, recording: setup))
        if activeKey {
            let (appID, keyID, masterKey) = (app.appID, TestGateway.keyID(of: app), masterKey)
            _ = try await memory.stores.keys.add(
                to: appID,
                { status in
                    try StoredKey(appID: appID, keyID: keyID, status: status, pair: TestKeys.shared, masterKey: masterKey)
                },
                recording: { _ in setup })
        }
        return app
    }

    /// Runs `body` with a client of the router (no sockets), or over a real connection with `.live`.
    public func test<Value: Sendable>(
        over setup: TestingSetup = .router, _ body: @Sendable (any TestClientProtocol) async throws -> Value
    ) async throws -> Value {
        try await application.test(setup, body)
    }

    public func adminToken(
        _ scope: AdminScope, expiresAt: Date? = nil, revoked: Bool = false, name: String = "test"
    ) async throws -> String {
        let secret = AdminTokenSecret.generate()
        let record = AdminTokenRecord(name: name, scope: scope, expiresAt: expiresAt)
        let setup = AuditEvent(appID: nil, event: "test.setup", outcome: .success, requestID: "setup")
        try await memory.stores.adminTokens.create(record, secret: secret, recording: setup)
        if revoked { _ = try await memory.stores.adminTokens.revoke(record.id, recording: setup) }
        return secret.text
    }

    /// Calls an admin route through the router; see ``TestClientProtocol/admin(_:_:token:json:)``.
    public func admin(
        _ method: HTTPRequest.Method, _ path: String, token: String?, json: [String: any Sendable]? = nil
    ) async throws -> TestResponse {
        try await test { try await $0.admin(method, path, token: token, json: json) }
    }

    /// The rows of one request: every row is written before its request is answered.
    public func auditRowsOnceWritten(requestID: String, event: String) async throws -> [AuditRow] {
        try await auditRows().filter { $0.requestID == requestID }
    }

    /// Every audit row, oldest first, each whole as its description; the setup rows are left out.
    public func auditRows() async throws -> [AuditRow] {
        memory.events.filter { $0.event != "test.setup" }.map { event in
            (event.requestID, event.event, event.reason, event.userID, String(describing: event))
        }
    }

    public func age(session sessionID: String, by seconds: Int) async throws {
        let moved = TimeInterval(seconds)
        try memory.amendSession(UUID(uuidString: sessionID)!) { session in
            session.createdAt -= moved
            session.lastUsedAt -= moved
            session.rotatedAt = session.rotatedAt.map { $0 - moved }
            session.idleExpiresAt -= moved
            session.expiresAt -= moved
        }
    }

    public func end(session sessionID: String, _ end: SessionEnd) async throws {
        let past = Date() - 1
        try memory.amendSession(UUID(uuidString: sessionID)!) { session in
            switch end {
            case .idle: session.idleExpiresAt = past
            case .absolute: session.expiresAt = past
            }
        }
    }

    public func sessionState(_ sessionID: String) async throws -> SessionState? {
        guard let session = memory.session(UUID(uuidString: sessionID)!) else { return nil }
        return SessionState(
            generation: Int64(session.generation), revokedReason: session.revokedReason, ended: !session.isLive(at: Date()))
    }

    /// Sends one request through the router.
    public func send(
        _ method: HTTPRequest.Method, _ path: String, token: String? = nil, json: [String: any Sendable]? = nil
    ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: [String: Any]) {
        let response = try await application.test(.router) { client in
            try await client.admin(method, path, token: token, json: json)
        }
        let bytes = Data(response.body.readableBytesView)
        let object = bytes.isEmpty ? [:] : (try JSONSerialization.jsonObject(with: bytes) as? [String: Any] ?? [:])
        return (response.status, response.headers, object)
    }

    /// Creates a development app through the admin API (by default one
    /// whose static users are anyone); returns its id.
    public func createApp(
        token: String, credentialTypes: [String] = ["static"],
        plugins: [String: any Sendable] = ["static": ["allow_any_user": true]]
    ) async throws -> String {
        let appID = UUID().uuidString.lowercased()
        let created = try await send(
            .post, "/admin/v1/apps", token: token,
            json: [
                "app_id": appID, "name": "memory", "environment": "development", "provider_id": UUID().uuidString,
                "credential_types": credentialTypes, "plugins": plugins,
            ])
        #expect(created.status == .created, "\(created.body)")
        return appID
    }
}
