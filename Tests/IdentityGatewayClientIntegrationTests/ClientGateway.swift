import Foundation
import GatewayCore
import GatewayTestSupport
import IdentityGatewayClient
import PostgresNIO
import Testing

/// What the client library's tests drive: the gateway binary over a fresh
/// database, with an app of static users and sessions on, and
/// `Tests/Vendors/fault_proxy.py` in front of it as the network, which
/// drops, holds, delays or refuses on demand and logs what passed.
struct ClientGateway: Sendable {
    let server: GatewayProcess
    let proxy: GatewayProcess
    let database: PostgresClient
    let bootstrap: String
    /// The app's id, a bare UUID.
    let appID: String

    var gatewayURL: String { "http://127.0.0.1:\(server.port)" }
    var proxyURL: String { "http://127.0.0.1:\(proxy.port)" }

    static let users = [("alice", "wonderland"), ("bob", "builder")]
    /// The static plugin's options with ``users``.
    static let staticUsers: [String: any Sendable] = [
        "users": users.map { ["user_id": $0.0, "password": $0.1] as [String: any Sendable] }
    ]

    /// Runs `body` with a gateway whose app has `settings` added to its
    /// creation (such as `rate_limits` or `mfa`) and whose process has
    /// `environment` added to its own, then stops both processes.
    static func with(
        _ settings: [String: any Sendable] = [:], environment: [String: String] = [:],
        _ body: @Sendable (ClientGateway) async throws -> Void
    ) async throws {
        try await TestDatabase.with(migrations: []) { database, url in
            let bootstrap = AdminTokenSecret.generate().text
            let server = try await GatewayProcess.start(
                ["serve"], environment: serveEnvironment(url, bootstrap: bootstrap).merging(environment) { _, added in added })
            let proxy: GatewayProcess
            do {
                proxy = try await GatewayProcess.startHelper("/usr/bin/python3", [Self.proxyScript, "\(server.port)"])
            } catch {
                _ = await server.stop()
                throw error
            }
            do {
                let gateway = ClientGateway(
                    server: server, proxy: proxy, database: database, bootstrap: bootstrap, appID: UUID().lowercasedText)
                try await gateway.createApp(settings)
                try await body(gateway)
            } catch {
                _ = await proxy.stop()
                _ = await server.stop()
                throw error
            }
            _ = await proxy.stop()
            #expect(await server.stop() == 0, "\(server.printed)")
        }
    }

    private static var proxyScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vendors/fault_proxy.py").path
    }

    private func createApp(_ settings: [String: any Sendable]) async throws {
        var app: [String: any Sendable] = [
            "app_id": appID, "name": "client library", "environment": "development", "provider_id": UUID().uuidString,
            "credential_types": ["static"],
            "plugins": ["static": Self.staticUsers],
            "sessions": [String: any Sendable](),
        ]
        app.merge(settings) { _, setting in setting }
        let created = try await HTTPCall.send("POST", "\(gatewayURL)/admin/v1/apps", token: bootstrap, json: app)
        try #require(created.status == 201, "\(created.text)")
        let key = try await HTTPCall.send(
            "POST", "\(gatewayURL)/admin/v1/apps/\(appID)/keys", token: bootstrap, json: ["generate": [String: any Sendable]()])
        try #require(key.status == 201, "\(key.text)")
    }

    /// A client of the app through the proxy.
    func client(
        store: any IdentityGatewayClient.SessionStore = MemorySessionStore(), url: String? = nil, requestTimeout: Duration = .seconds(30),
        refreshRetryWindow: Duration = .seconds(8), refreshGatheringWindow: Duration = .milliseconds(10)
    ) -> GatewayClient {
        GatewayClient(
            configuration: GatewayClientConfiguration(
                gatewayURL: URL(string: url ?? proxyURL)!, appID: appID, deviceLabel: "client tests",
                requestTimeout: requestTimeout, refreshRetryWindow: refreshRetryWindow,
                refreshGatheringWindow: refreshGatheringWindow),
            store: store)
    }

    /// Signs `user` in with their static password, answering `nonce`.
    @discardableResult
    func signIn(_ client: GatewayClient, as user: String = "alice", nonce: String = UUID().uuidString) async throws
        -> IdentityToken
    {
        let password = Self.users.first { $0.0 == user }!.1
        guard case .signedIn(let token) = try await client.signIn(userID: user, credential: .staticUser(password: password), nonce: nonce)
        else {
            throw Failure(description: "\(user) was asked for a second factor")
        }
        return token
    }

    /// Returns once the gateway answers the app's sign-ins as `enabled` says
    /// (403 `app_disabled` or not): a change through the admin API reaches
    /// the tenant cache by notification, a moment after its answer. Asked
    /// directly, not through a client, so no session moves; within 10 s.
    func appEnabledHasArrived(_ enabled: Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        let request: [String: any Sendable] = [
            "app_id": appID, "user_id": "bob", "nonce": "probe", "credentials": ["type": "static", "password": "builder"],
        ]
        while try await (HTTPCall.send("POST", "\(gatewayURL)/v1/identity_tokens", json: request).status == 403) == enabled {
            guard ContinuousClock.now < deadline else { throw Failure(description: "the app's enabled \(enabled) did not arrive in 10 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    // MARK: The proxy

    /// Sets the proxy's faults (`drop_refresh_answers`, `hold_refresh_answers`, `delay_ms`, `refuse`: Tests/Vendors/fault_proxy.py).
    func faults(_ rules: [String: any Sendable]) async throws {
        let set = try await HTTPCall.send("POST", "\(proxyURL)/__proxy/rules", json: rules)
        try #require(set.status == 200, "\(set.text)")
    }

    /// Returns once `count` refresh answers are held.
    func refreshAnswersHeld(_ count: Int) async throws {
        let held = try await HTTPCall.send("GET", "\(proxyURL)/__proxy/held?count=\(count)")
        try #require(held.status == 200, "\(held.text)")
    }

    /// Lets the held refresh answers go to their clients.
    func release() async throws {
        _ = try await HTTPCall.send("POST", "\(proxyURL)/__proxy/release")
    }

    struct Passed: Decodable {
        let path: String
        let kind: String
        let status: Int?
        let dropped: Bool
    }

    /// Every request that reached the proxy, in order.
    func passed() async throws -> [Passed] {
        let log = try await HTTPCall.send("GET", "\(proxyURL)/__proxy/log")
        return try JSONDecoder().decode([Passed].self, from: Data(log.text.utf8))
    }

    /// The most refreshes the proxy saw in flight at once.
    func mostRefreshesInFlight() async throws -> Int {
        let stats = try await HTTPCall.send("GET", "\(proxyURL)/__proxy/stats")
        return (stats.json["most_refreshes_in_flight"] as? Int) ?? -1
    }

    // MARK: The gateway's records

    /// How many audit rows of the app have `event` (and, where given, `detail.session`).
    func rows(_ event: String, session: String? = nil) async throws -> Int {
        let app = UUID(uuidString: appID)!
        let rows = try await database.query(
            """
            SELECT count(*)::int FROM audit_events
            WHERE app_id = \(app) AND event = \(event) AND (\(session)::text IS NULL OR detail->>'session' = \(session))
            """)
        var total = 0
        for try await count in rows.decode(Int.self) { total = count }
        return total
    }

    /// A session's generation (refreshes so far) and whether it has ended.
    func session(_ sessionID: String) async throws -> (generation: Int, revoked: Bool) {
        let rows = try await database.query(
            """
            SELECT generation::int, revoked_at IS NOT NULL FROM sessions
            WHERE app_id = \(UUID(uuidString: appID)!) AND session_id = \(UUID(uuidString: sessionID)!)
            """)
        for try await (generation, revoked) in rows.decode((Int, Bool).self) { return (generation, revoked) }
        throw Failure(description: "no session \(sessionID)")
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// The claims of a compact JWS, read without checking it (the gateway's own tests check its tokens).
func claims(of token: IdentityToken) throws -> [String: any Sendable] {
    let parts = token.token.split(separator: ".")
    var payload = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
    let object = try JSONSerialization.jsonObject(with: Data(base64Encoded: payload)!) as! [String: Any]
    return object.mapValues { "\($0)" }
}
