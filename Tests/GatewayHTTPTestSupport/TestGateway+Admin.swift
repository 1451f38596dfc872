public import Foundation
public import GatewayCore
import GatewayPostgres
import GatewayTestSupport
public import HTTPTypes
public import HummingbirdTesting
import NIOCore
import PostgresNIO
import Testing

extension TestGateway {
    /// Stores an admin token straight in the database and returns its secret.
    public func adminToken(
        _ scope: AdminScope, expiresAt: Date? = nil, revoked: Bool = false, name: String = "test"
    ) async throws -> String {
        let secret = AdminTokenSecret.generate()
        let record = AdminTokenRecord(name: name, scope: scope, expiresAt: expiresAt)
        let tokens = AdminTokenRepository(client: client, logger: TestDatabase.logger)
        try await client.withConnection { try await tokens.insert(record, secret: secret, on: $0) }
        if revoked {
            _ = try await client.withConnection { try await tokens.revoke(record.id, on: $0) }
        }
        return secret.text
    }
}

extension TestGateway {
    /// Calls an admin route through the router; see ``TestClientProtocol/admin(_:_:token:json:)``.
    public func admin(
        _ method: HTTPRequest.Method, _ path: String, token: String?, json: [String: any Sendable]? = nil
    ) async throws -> TestResponse {
        try await test { try await $0.admin(method, path, token: token, json: json) }
    }
}

/// A JSON object response body.
public func jsonObject(_ response: TestResponse) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
    return try #require(object as? [String: Any])
}

/// A request body that creates a development app with static users allowed for anyone.
public func newAppBody(_ appID: UUID = UUID(), name: String = "New app") -> [String: any Sendable] {
    [
        "app_id": "layer:///apps/staging/\(appID.lowercasedText)", "name": name,
        "environment": "development", "provider_id": "layer:///providers/\(UUID().lowercasedText)",
        "credential_types": ["static"], "plugins": ["static": ["allow_any_user": true]],
    ]
}

/// The body's text, for "does it leak" checks.
public func text(_ response: TestResponse) -> String {
    String(decoding: response.body.readableBytesView, as: UTF8.self)
}

/// The repository's `openapi.yaml`, which the contract tests hold the routes to.
public let openAPIDocumentURL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appending(path: "openapi.yaml")
