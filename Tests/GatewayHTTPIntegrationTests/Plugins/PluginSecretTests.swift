import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// Plugin secrets (SMS sender secrets, static test users' passwords) are
/// sealed with the master key at rest, bound to their app and field.
@Suite struct PluginSecretTests {
    @Test func aSecretWrittenThroughTheAdminAPIIsSealedAtRestAndStillWorks() async throws {
        try await TestGateway.with { gateway in
            let token = try await gateway.adminToken(.operator)
            let appID = UUID().lowercasedText
            let created = try await gateway.admin(
                .post, "/admin/v1/apps", token: token,
                json: [
                    "app_id": appID, "name": "sealed", "environment": "development", "provider_id": UUID().uuidString,
                    "credential_types": ["static"],
                    "plugins": ["static": ["users": [["user_id": "alice", "password": "correct horse battery"]]]],
                ])
            #expect(created.status == .created, "\(text(created))")
            let stored = try await gateway.client.query(
                "SELECT plugins::text FROM apps WHERE app_id = \(UUID(uuidString: appID)!)", logger: TestDatabase.logger)
            var text = ""
            for try await row in stored.decode(String.self) { text = row }
            #expect(!text.contains("correct horse battery"))
            #expect(text.contains("sealed:v1:"))
            _ = try await gateway.admin(.post, "/admin/v1/apps/\(appID)/keys", token: token, json: ["generate": ["bits": 2048]])
            let login = try await gateway.test {
                try await $0.postJSON([
                    "app_id": appID, "user_id": "alice", "nonce": "n",
                    "credentials": ["type": "static", "password": "correct horse battery"],
                ])
            }
            #expect(login.status == .ok)
            // A change elsewhere keeps the secret.
            #expect(try await gateway.admin(.patch, "/admin/v1/apps/\(appID)", token: token, json: ["name": "renamed"]).status == .ok)
            _ = try await gateway.tenants.tenant(for: AppID(appID)!)
            gateway.tenants.invalidate(notification: appID)
            let again = try await gateway.test {
                try await $0.postJSON([
                    "app_id": appID, "user_id": "alice", "nonce": "n2",
                    "credentials": ["type": "static", "password": "correct horse battery"],
                ])
            }
            #expect(again.status == .ok)
        }
    }

    @Test func aSealedSecretOpensOnlyForItsAppAndFieldAndResealsUnderANewKey() throws {
        let old = try MasterKey(base64: MasterKey.generateBase64())
        let new = try MasterKey(base64: MasterKey.generateBase64())
        let registry = TestGateway.staticUsersOnly
        var app = AppSettings(
            appID: AppID(uuid: UUID()), name: "a", environment: .development, providerID: ProviderID(uuid: UUID()),
            credentialTypes: ["static"])
        app.plugins = ["static": .object(["users": .array([.object(["user_id": .string("u"), "password": .string("pw-1")])])])]
        let sealed = try registry.sealingSecrets(of: app, with: old)
        #expect(try registry.openingSecrets(of: sealed, with: old).plugins == app.plugins)
        // Moved to another app, it does not open.
        var moved = sealed
        moved.appID = AppID(uuid: UUID())
        #expect(throws: (any Error).self) { try registry.openingSecrets(of: moved, with: old) }
        // Under a rotation the secret is sealed again, and the new key alone opens it.
        let (resealed, changed) = try registry.resealingSecrets(of: sealed, with: new.addingPrevious(old))
        #expect(changed == 1)
        #expect(try registry.openingSecrets(of: resealed, with: new).plugins == app.plugins)
        #expect(try registry.resealingSecrets(of: resealed, with: new.addingPrevious(old)).changed == 0)
        // One stored before sealing existed is sealed by the same pass.
        #expect(try registry.resealingSecrets(of: app, with: new).changed == 1)
    }
}
