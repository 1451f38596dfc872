import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Who may do what: every admin route, called by every kind of caller. A
/// decision of the HTTP layer, tested over memory.
@Suite struct AdminScopeMatrixTests {
    enum Caller: String, CaseIterable {
        case operatorToken, appAToken, appBToken, noToken, revokedToken, expiredToken, garbageToken
    }

    /// One admin route: how to call it fresh each time, and whether it is for operators only.
    struct Route: Sendable {
        let name: String
        let operatorOnly: Bool
        /// Whether the path names an app: a token of another app must see 404 there, as if it did not exist.
        var targetsApp: Bool { name.contains("/apps/{id}") }
        let call: @Sendable (MemoryGateway, AppSettings, String?) async throws -> TestResponse
    }

    static func routes() -> [Route] {
        [
            Route(name: "POST /apps", operatorOnly: true) { gateway, _, token in
                try await gateway.test { try await $0.admin(.post, "/admin/v1/apps", token: token, json: newAppBody()) }
            },
            Route(name: "GET /apps", operatorOnly: true) { gateway, _, token in
                try await gateway.test { try await $0.admin(.get, "/admin/v1/apps", token: token) }
            },
            Route(name: "GET /apps/{id}", operatorOnly: false) { gateway, app, token in
                try await gateway.test { try await $0.admin(.get, "/admin/v1/apps/\(app.appID)", token: token) }
            },
            Route(name: "PATCH /apps/{id}", operatorOnly: false) { gateway, app, token in
                try await gateway.test {
                    try await $0.admin(.patch, "/admin/v1/apps/\(app.appID)", token: token, json: ["token_ttl_seconds": 90])
                }
            },
            Route(name: "DELETE /apps/{id}", operatorOnly: true) { gateway, app, token in
                try await gateway.test { try await $0.admin(.delete, "/admin/v1/apps/\(app.appID)", token: token) }
            },
            Route(name: "POST /apps/{id}/keys", operatorOnly: false) { gateway, app, token in
                try await gateway.test {
                    try await $0.admin(
                        .post, "/admin/v1/apps/\(app.appID)/keys", token: token,
                        json: ["key_id": UUID().uuidString, "private_key_pem": TestKeys.shared.privateKeyPEM])
                }
            },
            Route(name: "GET /apps/{id}/keys", operatorOnly: false) { gateway, app, token in
                try await gateway.test { try await $0.admin(.get, "/admin/v1/apps/\(app.appID)/keys", token: token) }
            },
            Route(name: "GET /apps/{id}/keys/{kid}", operatorOnly: false) { gateway, app, token in
                let keyID = TestGateway.keyID(of: app).uuid
                return try await gateway.test { try await $0.admin(.get, "/admin/v1/apps/\(app.appID)/keys/\(keyID)", token: token) }
            },
            Route(name: "POST /apps/{id}/keys/{kid}/activate", operatorOnly: false) { gateway, app, token in
                let keyID = TestGateway.keyID(of: app).uuid
                return try await gateway.test {
                    try await $0.admin(.post, "/admin/v1/apps/\(app.appID)/keys/\(keyID)/activate", token: token)
                }
            },
            Route(name: "DELETE /apps/{id}/keys/{kid}", operatorOnly: false) { gateway, app, token in
                let keyID = try await gateway.addNextKey(to: app)
                return try await gateway.test { try await $0.admin(.delete, "/admin/v1/apps/\(app.appID)/keys/\(keyID.uuid)", token: token) }
            },
            Route(name: "POST /admin_tokens", operatorOnly: true) { gateway, _, token in
                try await gateway.test {
                    try await $0.admin(.post, "/admin/v1/admin_tokens", token: token, json: ["name": "n", "scope": "operator"])
                }
            },
            Route(name: "GET /admin_tokens", operatorOnly: true) { gateway, _, token in
                try await gateway.test { try await $0.admin(.get, "/admin/v1/admin_tokens", token: token) }
            },
            Route(name: "DELETE /admin_tokens/{id}", operatorOnly: true) { gateway, _, token in
                let victim = AdminTokenRecord(name: "victim", scope: .operator)
                try await gateway.memory.stores.adminTokens.create(victim, secret: .generate(), recording: .testSetup)
                return try await gateway.test { try await $0.admin(.delete, "/admin/v1/admin_tokens/\(victim.id)", token: token) }
            },
        ]
    }

    @Test(arguments: Caller.allCases)
    func everyRouteAnswersEachCallerAsItsScopeAllows(_ caller: Caller) async throws {
        try await MemoryGateway.with { gateway in
            let appB = try await gateway.createApp { $0.name = "App B" }
            let token: String?
            switch caller {
            case .operatorToken: token = try await gateway.adminToken(.operator)
            case .appAToken: token = nil
            case .appBToken: token = try await gateway.adminToken(.app(appB.appID))
            case .noToken: token = nil
            case .revokedToken: token = try await gateway.adminToken(.operator, revoked: true)
            case .expiredToken: token = try await gateway.adminToken(.operator, expiresAt: Date().addingTimeInterval(-1))
            case .garbageToken: token = "igw_" + String(repeating: "x", count: 43)
            }
            for route in Self.routes() {
                // A fresh app A for each call, with a secret-looking name that must never leak to app B.
                let appA = try await gateway.createApp { $0.name = "App A confidential" }
                let callerToken = caller == .appAToken ? try await gateway.adminToken(.app(appA.appID)) : token
                let response = try await route.call(gateway, appA, callerToken)
                let status = response.status.code
                switch caller {
                case .operatorToken:
                    #expect((200..<300).contains(status), "\(route.name): \(status) \(text(response))")
                    #expect(response.headers[.cacheControl] == "no-store", "\(route.name)")
                case .appAToken:
                    #expect(route.operatorOnly ? status == 403 : (200..<300).contains(status), "\(route.name): \(status)")
                case .appBToken:
                    #expect(route.targetsApp ? status == 404 : status == 403, "\(route.name): \(status)")
                    #expect(!text(response).contains("confidential"))
                case .noToken, .revokedToken, .expiredToken, .garbageToken:
                    #expect(status == 401, "\(route.name): \(status)")
                    #expect(try jsonObject(response)["error"] as? String == "unauthorized")
                    let challenge = caller == .noToken ? #"Bearer realm="admin""# : #"Bearer realm="admin", error="invalid_token""#
                    #expect(response.headers[.wwwAuthenticate] == challenge, "\(route.name)")
                }
            }
        }
    }
}

extension MemoryGateway {
    /// Adds a `next` key to the app and returns its id.
    func addNextKey(to app: AppSettings) async throws -> KeyID {
        let keyID = KeyID(uuid: UUID())
        let masterKey = masterKey
        _ = try await memory.stores.keys.add(
            to: app.appID,
            { status in
                #expect(status == .next)
                return try StoredKey(appID: app.appID, keyID: keyID, status: status, pair: TestKeys.shared, masterKey: masterKey)
            },
            recording: { _ in .testSetup })
        return keyID
    }
}

extension AuditEvent {
    /// What a test's own setup records.
    fileprivate static var testSetup: AuditEvent {
        AuditEvent(appID: nil, event: "test.setup", outcome: .success, requestID: "setup")
    }
}
