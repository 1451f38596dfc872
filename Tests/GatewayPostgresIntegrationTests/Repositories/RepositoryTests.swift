import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

@Suite struct RepositoryTests {
    let logger = TestDatabase.logger

    static func app(_ environment: AppEnvironment = .development) -> AppSettings {
        AppSettings(
            appID: AppID(uuid: UUID()), name: "Test app", environment: environment, providerID: ProviderID(uuid: UUID()),
            tokenTTLSeconds: 300, credentialTypes: ["static"],
            plugins: ["static": .object(["allow_any_user": .bool(true), "users": .array([])])])
    }

    @Test func appsRoundTripAndIdsAreUnique() async throws {
        try await TestDatabase.with { client, _ in
            let apps = AppRepository(client: client, logger: logger)
            let app = Self.app()
            let inserted = try await apps.insert(app)
            let found = try await apps.find(app.appID)
            let insertedAgain = try await apps.insert(app)
            let missing = try await apps.find(AppID(uuid: UUID()))
            #expect(inserted)
            #expect(found?.settings == app)
            #expect(!insertedAgain)
            #expect(missing == nil)
        }
    }

    @Test func keysAreSealedAndOnlyOneIsActive() async throws {
        try await TestDatabase.with { client, _ in
            let app = Self.app()
            try await AppRepository(client: client, logger: logger).insert(app)
            let keys = AppKeyRepository(client: client, logger: logger)
            let masterKey = try MasterKey(base64: MasterKey.generateBase64())
            let active = try StoredKey(
                appID: app.appID, keyID: KeyID(uuid: UUID()), status: .active, pair: TestKeys.shared, masterKey: masterKey)
            try await keys.insert(active)

            let activeKey = try await keys.activeKey(of: app.appID)
            let loaded = try #require(activeKey)
            #expect(loaded.keyID == active.keyID)
            #expect(loaded.publicKeyPEM == TestKeys.shared.publicKeyPEM)
            #expect(try loaded.open(with: masterKey).publicKeyPEM == TestKeys.shared.publicKeyPEM)
            #expect(!loaded.sealedPrivateKey.contains(Data("PRIVATE KEY".utf8)))
            #expect(throws: (any Error).self) { try loaded.open(with: MasterKey(base64: MasterKey.generateBase64())) }

            let second = try StoredKey(
                appID: app.appID, keyID: KeyID(uuid: UUID()), status: .active, pair: TestKeys.shared, masterKey: masterKey)
            await #expect(throws: PSQLError.self) { try await keys.insert(second) }
            let next = try StoredKey(
                appID: app.appID, keyID: KeyID(uuid: UUID()), status: .next, pair: TestKeys.shared, masterKey: masterKey)
            try await keys.insert(next)
            let all = try await keys.keys(of: app.appID)
            let upcoming = try await keys.keys(of: app.appID).filter { $0.status == .next }
            #expect(all.count == 2)
            #expect(upcoming.map(\.keyID) == [next.keyID])
        }
    }

    @Test func theAuditTrailIsAppendOnly() async throws {
        try await TestDatabase.with { client, _ in
            let audit = PostgresAuditLog(client: client, logger: logger)
            try await audit.record(AuditEvent(appID: nil, event: "token.denied", outcome: .failure, reason: "unknown_app", requestID: "r1"))
            let rows = try await client.query("SELECT app_id, event, reason FROM audit_events", logger: logger)
            for try await (appID, event, reason) in rows.decode((UUID, String, String?).self) {
                #expect(appID == AuditEvent.noApp)
                #expect(event == "token.denied")
                #expect(reason == "unknown_app")
            }
            await #expect(throws: PSQLError.self) {
                try await client.query("UPDATE audit_events SET reason = 'x'", logger: logger)
            }
            await #expect(throws: PSQLError.self) {
                try await client.query("DELETE FROM audit_events", logger: logger)
            }
        }
    }

    @Test func databaseURLsAreReadAndMasked() throws {
        let url = try DatabaseURL("postgres://gateway:s%40cret@db.example:6543/idgw?sslmode=require")
        #expect(url.configuration.host == "db.example")
        #expect(url.configuration.port == 6543)
        #expect(url.configuration.username == "gateway")
        #expect(url.configuration.password == "s@cret")
        #expect(url.configuration.database == "idgw")
        #expect(!url.description.contains("cret"))
        #expect(throws: DatabaseURLError.self) { try DatabaseURL("mysql://x@y/z") }
        #expect(throws: DatabaseURLError.self) { try DatabaseURL("postgres://u@h/d?sslmode=maybe") }
    }
}
