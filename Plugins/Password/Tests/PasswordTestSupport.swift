import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayPluginPostgres
import GatewayRuntime
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
@testable import PasswordPlugin
import StaticUsersPlugin
import Testing

extension PluginRegistry {
    /// Static users beside passwords; logins and admin writes share one hasher, as in the server.
    static let passwordTests = PluginRegistry([StaticUsersPlugin(), PasswordPlugin(hasher: PasswordHasher())])
}

/// The cheapest argon2id cost the plugin accepts, so tests hash in milliseconds.
let cheapArgon2: [String: any Sendable] = ["memory_kib": 8192, "iterations": 1]

extension GatewayUnderTest {
    /// A development app that accepts passwords, hashing at `argon2` cost.
    func createPasswordApp(
        argon2: [String: any Sendable] = cheapArgon2, minLength: Int? = nil,
        rateLimits: [String: RateLimitOverride] = [:]
    ) async throws -> AppSettings {
        try await createApp(activeKey: true) { app in
            app.credentialTypes = ["password"]
            app.rateLimits = rateLimits
            var options: [String: JSONValue] = [
                "argon2": .object(argon2.mapValues { .number(Double($0 as! Int)) })
            ]
            if let minLength { options["min_length"] = .number(Double(minLength)) }
            app.plugins = ["password": .object(options)]
        }
    }

    /// `PUT`s a user with an operator token; fails the test unless it is stored.
    @discardableResult
    func putUser(
        _ userID: String, in app: AppSettings, token: String, _ fields: [String: any Sendable]
    ) async throws -> TestResponse {
        let response = try await admin(.put, Self.userPath(userID, in: app), token: token, json: fields)
        #expect([.created, .ok].contains(response.status), "\(text(response))")
        return response
    }

    static func userPath(_ userID: String, in app: AppSettings) -> String {
        let encoded = userID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? userID
        return "/admin/v1/apps/\(app.appID)/users/\(encoded)"
    }

    /// Moves the user's last login `seconds` before now, as if it had been then.
    func backdateLastLogin(of userID: String, in app: AppSettings, by seconds: Int) async throws {
        switch pluginServices.storage {
        case .database(let database):
            try await database.postgres.query(
                """
                UPDATE password_users SET last_login_at = now() - make_interval(secs => \(seconds))
                WHERE app_id = \(app.appID.uuid) AND user_id = \(userID)
                """, logger: TestDatabase.logger)
        case .memory(let memory):
            memory.table(of: MemoryPasswordUsers.Rows.self, empty: .init()).change { rows in
                rows.users[app.appID]?[userID]?.lastLoginAt = Date().addingTimeInterval(-TimeInterval(seconds))
            }
        }
    }

    /// The stored PHC or bcrypt string of a user, read straight from the store.
    func storedHash(of userID: String, in app: AppSettings) async throws -> String? {
        try await pluginServices.passwordUsers.find(userID, in: app.appID)?.hash.text
    }
}

/// A token request with a password credential.
func passwordRequest(_ app: AppSettings, user: String, password: String) -> [String: any Sendable] {
    [
        "app_id": "layer:///apps/staging/\(app.appID)", "user_id": user, "nonce": "n-\(UUID())",
        "credentials": ["type": "password", "password": password],
    ]
}

/// An error body without its request id, to compare two refusals.
func refusal(_ response: TestResponse) throws -> [String: String] {
    var body = try errorBody(response)
    body["request_id"] = nil
    return body.mapValues { "\($0)" }
}
