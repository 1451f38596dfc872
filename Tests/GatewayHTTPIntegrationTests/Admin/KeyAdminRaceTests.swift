import GatewayHTTPTestSupport
import GatewayRuntime
import _CryptoExtras
import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// What PostgreSQL holds of an app's keys when admin requests race: the
/// key set's lock and the generation queue. The key routes' decisions are
/// tested over memory (GatewayHTTPUnitTests' KeyAdminTests).
@Suite struct KeyAdminRaceTests {
    /// Thirty imports at once into an app without keys: the key set is
    /// locked per app, so exactly one becomes active and exactly
    /// ``StoredKey/maximumPerApp`` are stored; the rest are 409s.
    @Test func parallelImportsStopAtTheKeyLimitWithOneActiveKey() async throws {
        let attempts = 30
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp(activeKey: false)
            let token = try await gateway.adminToken(.app(app.appID))
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<attempts {
                    group.addTask {
                        let body: [String: any Sendable] = [
                            "key_id": UUID().uuidString, "private_key_pem": TestKeys.shared.privateKeyPEM,
                        ]
                        let response = try await gateway.admin(.post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: body)
                        if response.status == .conflict {
                            #expect(try jsonObject(response)["message"] as? String == "The app holds 20 keys, the most it may; delete a retired one first.")
                        }
                        return Int(response.status.code)
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == StoredKey.maximumPerApp)
            #expect(statuses.filter { $0 == 409 }.count == attempts - StoredKey.maximumPerApp)
            let stored = try await gateway.client.query(
                "SELECT status FROM app_keys WHERE app_id = \(app.appID.uuid)", logger: TestDatabase.logger
            ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
            #expect(stored.count == StoredKey.maximumPerApp)
            #expect(stored.filter { $0 == "active" }.count == 1)
            #expect(try await gateway.auditRows().filter { $0.event == "admin.key.created" }.count == StoredKey.maximumPerApp)
        }
    }

    /// Key generation runs one at a time with two waiting: a burst of 4096-bit
    /// requests from one app admin is answered 503 `busy` past that, at once,
    /// instead of taking every core from every tenant.
    @Test func aBurstOfKeyGenerationsIsRefusedPastTheQueue() async throws {
        let attempts = 8
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp(activeKey: false)
            let token = try await gateway.adminToken(.app(app.appID))
            let answers = try await withThrowingTaskGroup(of: (Int, String?, String?).self) { group in
                for _ in 0..<attempts {
                    group.addTask {
                        let response = try await gateway.admin(
                            .post, "/admin/v1/apps/\(app.appID)/keys", token: token, json: ["generate": ["bits": 4096]])
                        let code = response.status == .created ? nil : try jsonObject(response)["error"] as? String
                        return (Int(response.status.code), code, response.headers[.retryAfter])
                    }
                }
                return try await group.reduce(into: [(Int, String?, String?)]()) { $0.append($1) }
            }
            let created = answers.filter { $0.0 == 201 }.count
            let busy = answers.filter { $0.0 == 503 && $0.1 == "busy" && $0.2 == "1" }.count
            #expect(created + busy == attempts, "\(answers)")
            #expect(created >= 1 && busy >= 1, "\(answers)")
            let stored = try await gateway.client.query(
                "SELECT count(*)::int8 FROM app_keys WHERE app_id = \(app.appID.uuid)", logger: TestDatabase.logger
            ).decode(Int.self).reduce(0) { $0 + $1 }
            #expect(stored == created)
        }
    }
}
