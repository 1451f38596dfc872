public import Foundation
public import GatewayCore
public import GatewayPluginKit
public import GatewayRuntime
public import HTTPTypes
public import HummingbirdTesting

/// One audit row as a test reads it: the columns tests ask about, and the
/// whole row as text (to look for what must never be there).
public typealias AuditRow = (requestID: String, event: String, reason: String?, userID: String?, text: String)

/// A gateway a test drives: ``TestGateway`` over PostgreSQL or
/// ``MemoryGateway`` over memory. A plugin's test helpers are written once
/// against this, so each test picks its ground: memory for the plugin's
/// logic, PostgreSQL for its SQL, locks and replicas.
public protocol GatewayUnderTest: Sendable {
    /// What the gateway lends its plugins (their tables among them).
    var pluginServices: PluginServices { get }

    /// The apps as the gateway holds them, to drop one after changing it behind the cache.
    var tenants: TenantCache { get }

    /// A development app with static users and an active key; `configure` may change it first.
    func createApp(activeKey: Bool, _ configure: (inout AppSettings) -> Void) async throws -> AppSettings

    /// Stores an admin token and returns its secret.
    func adminToken(_ scope: AdminScope, expiresAt: Date?, revoked: Bool, name: String) async throws -> String

    /// Calls an admin route through the router.
    func admin(_ method: HTTPRequest.Method, _ path: String, token: String?, json: [String: any Sendable]?) async throws
        -> TestResponse

    /// Runs `body` with a client of the router (no sockets), or over a real connection with `.live`.
    func test<Value: Sendable>(over setup: TestingSetup, _ body: @Sendable (any TestClientProtocol) async throws -> Value)
        async throws -> Value

    /// Every audit row, oldest first.
    func auditRows() async throws -> [AuditRow]

    /// The rows of one request, once every row the gateway holds back is written and one of them is `event`.
    func auditRowsOnceWritten(requestID: String, event: String) async throws -> [AuditRow]

    /// Moves a user's session `seconds` into the past (its start, last use,
    /// rotation and both ends), as if that long had passed.
    func age(session sessionID: String, by seconds: Int) async throws

    /// Puts the session's `end` one second in the past, leaving the rest as it is.
    func end(session sessionID: String, _ end: SessionEnd) async throws

    /// The session as the gateway keeps it; nil when there is no such session.
    func sessionState(_ sessionID: String) async throws -> SessionState?
}

extension GatewayUnderTest {
    /// An operator token's secret, stored as the admin API would.
    public func operatorToken() async throws -> String {
        try await adminToken(.operator, expiresAt: nil, revoked: false, name: "test")
    }
}
