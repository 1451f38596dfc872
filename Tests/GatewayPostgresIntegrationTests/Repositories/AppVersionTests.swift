import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// The tenant cache's periodic check compares the version one query reads
/// for every app with the version each app was loaded at, computed from its
/// rows in Swift: the two must agree exactly, and move with every change.
@Suite struct AppVersionTests {
    let logger = TestDatabase.logger

    @Test func theOneReadAgreesWithEachAppsRowsAndMovesWithEveryChange() async throws {
        try await TestDatabase.with { client, _ in
            let apps = AppRepository(client: client, logger: logger)
            let keys = AppKeyRepository(client: client, logger: logger)
            let store = PostgresTenantStore(client: client, logger: logger)
            let masterKey = try MasterKey(base64: MasterKey.generateBase64())
            func version(of appID: AppID) async throws -> AppVersion {
                AppVersion(app: try #require(try await apps.find(appID)), keys: try await keys.keys(of: appID))
            }
            let keyless = RepositoryTests.app()
            let keyed = RepositoryTests.app()
            try await apps.insert(keyless)
            try await apps.insert(keyed)
            let first = KeyID(uuid: UUID())
            try await keys.insert(try StoredKey(appID: keyed.appID, keyID: first, status: .active, pair: TestKeys.shared, masterKey: masterKey))
            var seen = try #require(try await store.versions())
            #expect(seen[keyless.appID] == (try await version(of: keyless.appID)))
            #expect(seen[keyless.appID]?.keyCount == 0 && seen[keyless.appID]?.latestKeyChange == nil)
            #expect(seen[keyed.appID] == (try await version(of: keyed.appID)))

            // A next key, its activation (the first retires), a settings change: each a new version, still agreeing.
            var before = try #require(seen[keyed.appID])
            let second = KeyID(uuid: UUID())
            try await keys.insert(try StoredKey(appID: keyed.appID, keyID: second, status: .next, pair: TestKeys.shared, masterKey: masterKey))
            let changes: [(String, @Sendable () async throws -> Void)] = [
                ("activation", { _ = try await client.withConnection { try await keys.activate(second, of: keyed.appID, on: $0) } }),
                ("settings", {
                    var renamed = keyed
                    renamed.name = "renamed"
                    _ = try await client.withConnection { try await apps.update(renamed, on: $0) }
                }),
            ]
            seen = try #require(try await store.versions())
            let withNext = try await version(of: keyed.appID)
            #expect(seen[keyed.appID] != before, "next key")
            #expect(seen[keyed.appID] == withNext, "next key")
            for (what, change) in changes {
                before = try #require(seen[keyed.appID])
                try await change()
                seen = try #require(try await store.versions())
                #expect(seen[keyed.appID] != before, "\(what)")
                #expect(seen[keyed.appID] == (try await version(of: keyed.appID)), "\(what)")
            }
            #expect(seen[keyless.appID] == (try await version(of: keyless.appID)), "the other app's is as it was")
        }
    }
}
