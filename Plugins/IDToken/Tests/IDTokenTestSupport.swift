import Foundation
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayOutbound
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import IDTokenPlugin
import PasswordPlugin
import StaticUsersPlugin
import Testing

/// A real OpenID provider on loopback (`Tests/Vendors/oidc_provider.py`:
/// oidc-provider-mock, with test routes beside its own).
struct TestProvider {
    let process: GatewayProcess
    var base: String { "http://127.0.0.1:\(process.port)" }

    static func with<Result: Sendable>(_ body: @Sendable (TestProvider) async throws -> Result) async throws -> Result {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appending(path: "Tests/Vendors/oidc_provider.py").path
        let provider = TestProvider(process: try await GatewayProcess.startHelper(python, [script]))
        do {
            let result = try await body(provider)
            await provider.process.stop()
            return result
        } catch {
            await provider.process.stop()
            throw error
        }
    }

    /// The client id (the audience) the provider registered for `name`.
    func clientID(_ name: String) async throws -> String {
        try #require(try await call("GET", "/test/client?name=\(name)")["client_id"] as? String)
    }

    /// An ID token the provider issues to client `client` for `subject`, through its own flow.
    func idToken(
        client: String = "ios", subject: String, nonce: String?, claims: [String: any Sendable] = [:]
    ) async throws -> String {
        var body: [String: any Sendable] = ["client": client, "sub": subject, "claims": claims]
        body["nonce"] = nonce
        return try #require(try await call("POST", "/test/id-token", body)["id_token"] as? String)
    }

    /// A token signed as an attack or a fixture needs (`provider`, `stranger`, `apple`, `google`, `ec`,
    /// `hs256-public-key`, `none`).
    func signed(_ claims: [String: any Sendable], key: String, header: [String: any Sendable] = [:]) async throws -> String {
        var fullHeader: [String: any Sendable] = ["alg": key == "ec" ? "ES256" : key == "none" ? "none" : key == "hs256-public-key" ? "HS256" : "RS256"]
        fullHeader.merge(header) { $1 }
        return try #require(try await call("POST", "/test/sign", ["header": fullHeader, "claims": claims, "key": key])["token"] as? String)
    }

    /// The `kid` of the first key the JWK set at `path` publishes (`/jwks` is the provider's own).
    func keyID(at path: String = "/jwks") async throws -> String {
        let answer = try await HTTPCall.send("GET", base + path)
        let keys = try #require(answer.json["keys"] as? [[String: any Sendable]])
        return try #require(keys.first?["kid"] as? String)
    }

    /// What an app's `apple_api` is given to call the stand-in for Apple's REST API.
    func appleAPI() async throws -> [String: any Sendable] {
        var settings = try await call("GET", "/test/apple-api")
        settings["token_url"] = base + "/auth/token"
        settings["revoke_url"] = base + "/auth/revoke"
        return settings
    }

    /// An authorization code Apple would give the app `clientID` at sign-in.
    func appleCode(for clientID: String) async throws -> String {
        try #require(try await call("POST", "/test/apple-code", ["client_id": clientID])["code"] as? String)
    }

    /// The next `revocations` revocations are answered 503.
    func appleOutage(revocations: Int) async throws { _ = try await call("POST", "/test/apple-outage", ["revocations": revocations]) }

    /// The refresh tokens the stand-in issued and revoked, and the client secrets it refused (why).
    func appleState() async throws -> (issued: [String], revoked: [String], refused: [String]) {
        let state = try await call("GET", "/test/apple-state")
        return (state["issued"] as? [String] ?? [], state["revoked"] as? [String] ?? [], state["refused"] as? [String] ?? [])
    }

    func keyFetches() async throws -> Int { try #require(try await call("GET", "/test/stats")["jwks_fetches"] as? Int) }
    func rotateKeys() async throws { _ = try await call("POST", "/test/rotate-keys") }
    func goDown() async throws { _ = try await call("POST", "/test/down") }
    func comeUp() async throws { _ = try await call("POST", "/test/up") }

    @discardableResult
    private func call(_ method: String, _ path: String, _ json: [String: any Sendable]? = nil) async throws -> [String: any Sendable] {
        let answer = try await HTTPCall.send(method, base + path, json: json)
        try #require(answer.status == 200, "\(method) \(path): \(answer.status) \(answer.text)")
        return answer.json
    }
}

/// Claims as a provider would issue them now, for tokens the tests sign themselves.
func providerClaims(issuer: String, audience: String, subject: String = "attacker", nonce: String?, lifetime: Double = 600)
    -> [String: any Sendable]
{
    let now = Date().timeIntervalSince1970.rounded(.down)
    var claims: [String: any Sendable] = ["iss": issuer, "aud": audience, "sub": subject, "iat": now, "exp": now + lifetime]
    claims["nonce"] = nonce
    return claims
}

extension GatewayUnderTest {
    /// A development app accepting ID tokens from `providers` (and passwords,
    /// at the cheapest cost), each provider linking verified emails to
    /// password users when `linking` (a provider may say so itself).
    func createIDTokenApp(
        _ providers: [[String: any Sendable]], linking: Bool = false, rateLimits: [String: RateLimitOverride] = [:]
    ) async throws -> AppSettings {
        let members: [String: any Sendable] = [
            "providers": linking ? providers.map { $0.merging(["link_verified_email": "password"]) { own, _ in own } } : providers
        ]
        let data = try JSONSerialization.data(withJSONObject: members)
        let options = try JSONDecoder().decode(JSONValue.self, from: data)
        return try await createApp(activeKey: true) { app in
            app.environment = .development
            app.credentialTypes = ["id_token", "password"]
            app.rateLimits = rateLimits
            app.plugins = [
                "id_token": options,
                "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
            ]
        }
    }

    /// A token request with the ID token, under the Layer nonce `nonce`.
    func idTokenLogin(_ app: AppSettings, token: String, nonce: String, user: String? = nil) async throws -> TestResponse {
        var fields: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "nonce": nonce, "credentials": ["type": "id_token", "id_token": token],
        ]
        fields["user_id"] = user
        let body = fields
        return try await test(over: .router) { try await $0.postJSON(body) }
    }

    /// The audit reason of the request `response` answered.
    func auditReason(of response: TestResponse) async throws -> String? {
        let requestID = try #require(response.headers[HTTPField.Name("x-request-id")!])
        let event = response.status == .ok ? "token.issued" : "token.denied"
        return try await auditRowsOnceWritten(requestID: requestID, event: event).first { $0.event == event }?.reason
    }
}

func claims(of response: TestResponse) throws -> [String: Any] {
    let token = try #require(identityToken(in: response))
    let data = try #require(Base64URL.decode(token.split(separator: ".")[1]))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// The plugins of an ID-token test: providers on loopback are allowed (the
/// operator's setting), and passwords for linking.
func idTokenPlugins(
    refetchInterval: Duration = .seconds(60), failureBackoff: Duration = .seconds(10), allowsPrivateAddresses: Bool = true,
    revocations: OutboxWorker.Settings = OutboxWorker.Settings()
) -> PluginRegistry {
    let passwords = PasswordPlugin(hasher: PasswordHasher())
    return PluginRegistry([
        StaticUsersPlugin(), passwords,
        IDTokenPlugin(
            addresses: OutboundAddressPolicy(allowsPrivateAddresses: allowsPrivateAddresses), refetchInterval: refetchInterval,
            failureBackoff: failureBackoff, passwords: passwords, workerSettings: revocations),
    ])
}
