import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import OpenSSLSigner
import PostgresNIO
import StaticUsersPlugin
import Testing

/// The gateway's router over ``InMemoryStores``: the HTTP layer, tested
/// without a database. What PostgreSQL itself guarantees (locks, group
/// commit, failover) stays in the integration tests.
struct MemoryGateway: Sendable {
    let memory = InMemoryStores()
    let masterKey = try! MasterKey(base64: MasterKey.generateBase64())
    let application: Application<RouterResponder<GatewayRequestContext>>

    init(rateLimits: RateLimitSettings = RateLimitSettings(), plugins: [any CredentialPlugin] = [StaticUsersPlugin()]) {
        let logger = Logger(label: "memory-gateway")
        let plugins = PluginRegistry(plugins)
        // A plugin's own tables are in PostgreSQL; this client is never run
        // and the plugins used here have no tables.
        let client = PostgresClient(
            configuration: .init(host: "127.0.0.1", username: "nobody", password: nil, database: nil, tls: .disable))
        let stores = memory.stores
        let services = PluginServices(client: client, apps: stores.apps, logger: logger)
        let tenants = TenantCache(
            store: stores.tenants, makeSigner: { try OpenSSLRS256Signer($0) }, plugins: plugins,
            pluginServices: services, masterKey: masterKey, logger: logger)
        let dependencies = GatewayDependencies(
            stores: stores, tenants: tenants, plugins: plugins, pluginServices: services, masterKey: masterKey,
            rateLimits: rateLimits, logsRequests: false, logger: logger)
        application = Application(router: GatewayRouter.make(dependencies), logger: logger)
    }

    /// An operator token's secret, stored as the admin API would.
    func operatorToken() async throws -> String {
        try await adminToken(.operator)
    }

    func adminToken(_ scope: AdminScope) async throws -> String {
        let secret = AdminTokenSecret.generate()
        try await memory.stores.adminTokens.create(
            AdminTokenRecord(name: "test", scope: scope), secret: secret,
            recording: AuditEvent(appID: nil, event: "test.setup", outcome: .success, requestID: "setup"))
        return secret.text
    }

    /// Sends one request through the router.
    func send(
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
    func createApp(
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
