import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
@testable import PasswordPlugin
import Testing
import WebhookPlugin

/// `migrate_on_success: "password"`: users the tenant vouches for move into
/// the app's password directory, and are checked there from then on.
@Suite struct WebhookMigrationTests {
    static let migrating: [String: JSONValue] = ["migrate_on_success": .string("password")]

    @Test func aVouchedUserMovesAndIsThenCheckedLocally() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, Self.migrating)
                let first = try await gateway.webhookLogin(app, user: "valid-ada")
                #expect(first.status == .ok)
                await plugins.webhook.migrationsFinished()
                #expect(tenant.requests.count == 1)

                // Stored at the app's argon2id cost, with the tenant's profile, and audited.
                let (hash, firstName) = try #require(try await Self.storedUser("valid-ada", in: app, gateway))
                #expect(hash.hasPrefix("$argon2id$v=19$m=8192,t=1,"))
                #expect(firstName == "Ada")
                let moved = try await gateway.auditRows().filter { $0.event == "user.migrated" }
                #expect(moved.map(\.userID) == ["valid-ada"])
                #expect(moved.first?.requestID == first.headers[HTTPField.Name("x-request-id")!])

                // From now on the directory answers, right or wrong; the tenant hears nothing more.
                let second = try await gateway.webhookLogin(app, user: "valid-ada")
                #expect(second.status == .ok)
                #expect(try claims(of: second)["display_name"] as? String == "Ada L.")
                let wrong = try await gateway.webhookLogin(app, user: "valid-ada", password: "wrong")
                #expect(wrong.status == .unauthorized)
                #expect(try await gateway.auditReason(of: wrong) == "bad_password")
                #expect(tenant.requests.count == 1)
            }
        }
    }

    /// The directory's verdict is final whatever the password's length: a
    /// disabled user is not handed to the tenant by sending a long password,
    /// and a field longer than any password is refused before any plugin.
    @Test func aDisabledDirectoryUserIsNeverAskedAboutWhateverThePasswordsLength() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, Self.migrating)
                let token = try await gateway.adminToken(.operator)
                let longest = String(repeating: "p", count: 1024)
                let put = try await gateway.admin(
                    .put, "/admin/v1/apps/\(app.appID)/users/valid-ada", token: token,
                    json: ["password": longest, "disabled": true])
                #expect(put.status == .created, "\(text(put))")

                let disabled = try await gateway.webhookLogin(app, user: "valid-ada", password: longest)
                #expect(disabled.status == .unauthorized)
                #expect(try await gateway.auditReason(of: disabled) == "disabled")
                let overlong = try await gateway.webhookLogin(app, user: "valid-ada", password: longest + "p")
                #expect(overlong.status == .badRequest, "\(text(overlong))")
                #expect(try errorBody(overlong)["message"] as? String == "credentials.password must be at most 1024 bytes.")
                #expect(tenant.requests.isEmpty)
            }
        }
    }

    /// The order of checks: a user the directory has already (an admin's) is
    /// checked there first, so the tenant cannot vouch over it, and a
    /// migration never replaces it.
    @Test func aDirectoryUserIsCheckedFirstAndNeverReplaced() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, Self.migrating)
                let token = try await gateway.adminToken(.operator)
                let put = try await gateway.admin(
                    .put, "/admin/v1/apps/\(app.appID)/users/valid-ada", token: token, json: ["password": "set by the admin"])
                #expect(put.status == .created, "\(text(put))")
                let before = try #require(try await Self.storedUser("valid-ada", in: app, gateway)).hash

                // The tenant would say yes to "right"; the directory says no, and is asked first.
                let refused = try await gateway.webhookLogin(app, user: "valid-ada", password: "right")
                #expect(refused.status == .unauthorized)
                #expect(try await gateway.auditReason(of: refused) == "bad_password")
                let admitted = try await gateway.webhookLogin(app, user: "valid-ada", password: "set by the admin")
                #expect(admitted.status == .ok)
                #expect(tenant.requests.isEmpty)
                await plugins.webhook.migrationsFinished()
                #expect(try await Self.storedUser("valid-ada", in: app, gateway)?.hash == before)
            }
        }
    }

    /// A user the tenant answers under another id is not moved: the next
    /// login, under the id the client knows, would not find them.
    @Test func aRenamedUserIsNotMoved() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base, Self.migrating)
                let response = try await gateway.webhookLogin(app, user: "renamed-ada")
                #expect(response.status == .ok)
                #expect(try claims(of: response)["prn"] as? String == "canonical-renamed-ada")
                await plugins.webhook.migrationsFinished()
                #expect(try await Self.storedUser("renamed-ada", in: app, gateway) == nil)
                #expect(try await Self.storedUser("canonical-renamed-ada", in: app, gateway) == nil)
                _ = try await gateway.webhookLogin(app, user: "renamed-ada")
                #expect(tenant.requests.count == 2)
            }
        }
    }

    /// Without `migrate_on_success` nobody moves.
    @Test func withoutTheOptionNobodyMoves() async throws {
        let plugins = WebhookTestPlugins()
        try await MemoryGateway.with(plugins: plugins.registry) { gateway in
            try await FakeTenant.with { base, tenant in
                let app = try await gateway.createWebhookApp(url: base)
                #expect(try await gateway.webhookLogin(app, user: "valid-ada").status == .ok)
                await plugins.webhook.migrationsFinished()
                #expect(try await gateway.webhookLogin(app, user: "valid-ada").status == .ok)
                #expect(try await Self.storedUser("valid-ada", in: app, gateway) == nil)
                #expect(tenant.requests.count == 2)
            }
        }
    }

    static func storedUser(_ userID: String, in app: AppSettings, _ gateway: some GatewayUnderTest) async throws
        -> (hash: String, firstName: String?)?
    {
        try await gateway.pluginServices.passwordUsers.find(userID, in: app.appID).map { ($0.hash.text, $0.profile[.firstName]) }
    }
}
