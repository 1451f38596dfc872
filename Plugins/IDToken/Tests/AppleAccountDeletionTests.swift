import Crypto
import Foundation
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import IDTokenPlugin

/// A user who signed in with Apple deletes their account inside the app,
/// and Apple hears of it: the authorization code of the sign-in was
/// exchanged for Apple's refresh token, which the deletion revokes through
/// the outbox. The stand-in for Apple (Tests/Vendors/oidc_provider.py)
/// judges every client secret with authlib and refuses any that is not as
/// Apple documents it.
@Suite struct AppleAccountDeletionTests {
    static let clientID = "com.example.shop"
    static let subject = "001234.0a1b2c3d4e5f.1234"

    @Test func anAppleUserDeletesTheirAccountAndAppleRevokesTheGrant() async throws {
        try await TestProvider.with { provider in
            try await TestGateway.with(plugins: idTokenPlugins(revocations: Self.quickRetries)) { gateway in
                let app = try await gateway.createAppleApp(provider)
                let userID = "apple:\(Self.subject)"
                let signedIn = try await gateway.appleSignIn(app, provider, code: try await provider.appleCode(for: Self.clientID))
                #expect(signedIn.status == .ok, "\(text(signedIn))")
                let refreshToken = try #require(try jsonObject(signedIn)["refresh_token"] as? String)
                let issued = try await provider.appleState().issued
                #expect(issued.count == 1)
                let kept = try await gateway.appleGrants(of: userID, in: app)
                #expect(kept.count == 1, "the grant is kept for the user")
                #expect(!kept.contains { $0.contains(Array(issued[0].utf8)) }, "and sealed: the token is not in the row")

                let shown = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: try await gateway.operatorToken())
                #expect(text(shown).contains("********") && !text(shown).contains("PRIVATE KEY"), "the key is write-only")

                // An Apple outage: the first revocation is answered 503, the next goes through.
                try await provider.appleOutage(revocations: 1)
                let deleted = try await gateway.test {
                    try await $0.postJSON(["app_id": app.appID.uuid.uuidString, "refresh_token": refreshToken], to: "/v1/accounts/deletion")
                }
                #expect(deleted.status == .ok, "\(text(deleted))")
                #expect(try await gateway.appleGrants(of: userID, in: app).isEmpty)
                #expect(try await gateway.refresh(app, refreshToken).status == .unauthorized, "the session ended with the account")

                // The worker's last row is written once Apple has answered: awaited, then Apple's side read.
                let deadline = ContinuousClock.now + .seconds(30)
                while try await !gateway.auditRows().contains(where: { $0.event == "id_token.apple_revoked" }), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))  // polling: the outbox retries on its own schedule
                }
                let state = try await provider.appleState()
                #expect(state.revoked == issued, "Apple was told to revoke the grant")
                #expect(state.refused.isEmpty, "every client secret was as Apple documents it: \(state.refused)")
                let events = try await gateway.auditRows().filter { $0.userID == userID }.map(\.event)
                for event in ["account.deleted", "id_token.apple_revocation_queued", "id_token.apple_revocation_retrying", "id_token.apple_revoked"] {
                    #expect(events.contains(event), "\(event) in \(events)")
                }
            }
        }
    }

    /// A code Apple does not take (spent, made up) leaves the sign-in as it
    /// is, with no grant kept; a sign-in without a code keeps none either.
    @Test func aCodeAppleRefusesSignsInWithNoGrant() async throws {
        try await TestProvider.with { provider in
            try await TestGateway.with(plugins: idTokenPlugins()) { gateway in
                let app = try await gateway.createAppleApp(provider)
                let code = try await provider.appleCode(for: Self.clientID)
                #expect(try await gateway.appleSignIn(app, provider, code: code).status == .ok)
                try await gateway.client.query("DELETE FROM apple_grants", logger: TestDatabase.logger)
                #expect(try await gateway.appleSignIn(app, provider, code: code).status == .ok, "a spent code")
                #expect(try await gateway.appleSignIn(app, provider, code: nil).status == .ok)
                #expect(try await gateway.appleGrants(of: "apple:\(Self.subject)", in: app).isEmpty)
                #expect(try await provider.appleState().issued.count == 1)
            }
        }
    }

    static var quickRetries: OutboxWorker.Settings {
        var settings = OutboxWorker.Settings()
        settings.backoff.first = .milliseconds(200)
        settings.pollInterval = .milliseconds(100)
        return settings
    }
}

extension TestGateway {
    /// An app that accepts Sign in with Apple (its keys and API at the stand-in), with sessions and self-deletion.
    func createAppleApp(_ provider: TestProvider) async throws -> AppSettings {
        var apple: [String: any Sendable] = [
            "name": "apple", "preset": "apple", "jwks_url": provider.base + "/apple/keys",
            "audiences": [AppleAccountDeletionTests.clientID],
        ]
        apple["apple_api"] = try await provider.appleAPI()
        var app = try await createIDTokenApp([apple])
        app.sessions = SessionSettings()
        app.selfService = SelfServiceSettings(accountDeletion: true)
        let updated = app
        let patched = try await admin(
            .patch, "/admin/v1/apps/\(app.appID)", token: try await operatorToken(),
            json: ["sessions": [String: any Sendable](), "self_service": ["account_deletion": true]])
        #expect(patched.status == .ok, "\(text(patched))")
        return updated
    }

    /// A sign-in with an Apple ID token for the test's subject, and `code` beside it.
    func appleSignIn(_ app: AppSettings, _ provider: TestProvider, code: String?) async throws -> TestResponse {
        let nonce = "n-\(UUID())"
        let hashed = SHA256.hash(data: Data(nonce.utf8)).map { String(format: "%02x", $0) }.joined()
        let token = try await provider.signed(
            providerClaims(
                issuer: "https://appleid.apple.com", audience: AppleAccountDeletionTests.clientID,
                subject: AppleAccountDeletionTests.subject, nonce: hashed),
            key: "apple")
        var credentials: [String: any Sendable] = ["type": "id_token", "id_token": token]
        credentials["authorization_code"] = code
        let body: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "nonce": nonce, "credentials": credentials]
        return try await test { try await $0.postJSON(body) }
    }

    /// The sealed refresh tokens kept for `userID`.
    func appleGrants(of userID: String, in app: AppSettings) async throws -> [[UInt8]] {
        let rows = try await client.query(
            "SELECT sealed_refresh_token FROM apple_grants WHERE app_id = \(app.appID.uuid) AND user_id = \(userID)",
            logger: TestDatabase.logger)
        var sealed: [[UInt8]] = []
        for try await bytes in rows.decode(ByteBuffer.self) { sealed.append(Array(buffer: bytes)) }
        return sealed
    }
}
