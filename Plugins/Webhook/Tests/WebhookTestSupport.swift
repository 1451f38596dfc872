import Crypto
import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayOutbound
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PasswordPlugin
import StaticUsersPlugin
import Synchronization
import Testing
import WebhookPlugin

let tenantSecret = "tenant-secret-0123456789"

/// A clock the tests move by hand (circuit breakers' cool-downs).
final class TestClock: Sendable {
    private let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { time.withLock { $0 } }
    func advance(seconds: TimeInterval) { time.withLock { $0 += seconds } }
}

/// The plugins of a webhook test: static users, passwords, and webhooks
/// that may call loopback (the fake tenant listens there).
struct WebhookTestPlugins {
    /// The production policy (private addresses off), with loopback taken
    /// for a public address: the fake tenant stands for one on the internet.
    static let loopbackAsPublic = OutboundAddressPolicy(
        allowsPrivateAddresses: false, resolve: nil,
        blockedRanges: OutboundAddressPolicy.nonPublicRanges.filter { !$0.contains(IPAddress("127.0.0.1")!) && !$0.contains(IPAddress("::1")!) })

    let clock = TestClock()
    let webhook: WebhookPlugin
    let registry: PluginRegistry

    init(addresses: OutboundAddressPolicy = Self.loopbackAsPublic) {
        let passwords = PasswordPlugin(hasher: PasswordHasher())
        let clock = self.clock
        webhook = WebhookPlugin(addresses: addresses, passwords: passwords, now: { clock.now })
        registry = PluginRegistry([StaticUsersPlugin(), passwords, webhook])
    }
}

/// A tenant's user service, as the fake HTTP server plays it. It checks the
/// gateway's signature (a forged or stale one is answered 401) and answers
/// by the user id's first word:
/// - `valid-…`: valid when the password is `right`, with a profile;
/// - `renamed-…`: valid, under the user id `canonical-…`;
/// - `slow-…`: valid, after 5 s (past the 300 ms timeout of the test that asks it);
/// - `error-…`: HTTP 500; `refuse-…`: HTTP 413; `garbage-…`: not JSON; `huge-…`: 32 KiB;
/// - `redirect-…`: 302 to the fake's own `/elsewhere`;
/// - `odd-…`: JSON without `valid`; `control-…`: a user id no token request could name;
/// - anything else: `{"valid": false}`.
enum FakeTenant {
    static func answer(_ request: FakeHTTPServer.Recorded) -> FakeHTTPServer.Answer {
        guard signatureHolds(request) else { return .init(status: 401, body: #"{"error":"bad signature"}"#) }
        let question = request.json
        let userID = question["user_id"] as? String ?? ""
        let password = (question["credentials"] as? [String: Any])?["password"] as? String
        let kind = userID.split(separator: "-").first.map(String.init) ?? ""
        switch kind {
        case "valid" where password == "right":
            return .init(
                body: #"{"valid":true,"user_id":"\#(userID)","first_name":"Ada","last_name":"Lovelace","display_name":"Ada L.","avatar_url":"https://example.com/ada.png","plan":"gold"}"#)
        case "renamed" where password == "right":
            return .init(body: #"{"valid":true,"user_id":"canonical-\#(userID)"}"#)
        case "slow": return .init(body: #"{"valid":true}"#, delay: .seconds(5))
        case "error": return .init(status: 500, body: #"{"valid":true}"#)
        case "refuse": return .init(status: 413, body: #"{"error":"credentials too large"}"#)
        case "garbage": return .init(body: "<html>not json</html>")
        case "huge": return .init(body: #"{"valid":true,"pad":""# + String(repeating: "x", count: 32 * 1024) + #""}"#)
        case "redirect": return .init(status: 302, headers: ["Location": "/elsewhere"], body: "{}")
        case "odd": return .init(body: #"{"ok":true}"#)
        case "control": return .init(body: #"{"valid":true,"user_id":"line\nbreak"}"#)
        default: return .init(body: #"{"valid":false}"#)
        }
    }

    /// Whether the request carries a fresh, valid signature of its body.
    static func signatureHolds(_ request: FakeHTTPServer.Recorded) -> Bool {
        guard let timestamp = request.headers["x-gateway-timestamp"], let seconds = Int(timestamp),
            abs(Date().timeIntervalSince1970 - Double(seconds)) < 300,
            let signature = request.headers["x-gateway-signature"]
        else { return false }
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data("\(timestamp).\(request.body)".utf8), using: SymmetricKey(data: Data(tenantSecret.utf8)))
        return signature == "v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    /// Runs `body` with the fake tenant's base URL.
    static func with<Result: Sendable>(
        _ body: @Sendable (_ baseURL: String, _ server: FakeHTTPServer) async throws -> Result
    ) async throws -> Result {
        try await FakeHTTPServer.with(answering: { answer($0) }, body)
    }
}

extension FakeHTTPServer.Recorded {
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }
}

extension GatewayUnderTest {
    /// A development app accepting webhook credentials at `url`, with
    /// `options` over the defaults (the tests' secret, a 4 s timeout: the
    /// whole suite shares two cores),
    /// and passwords at the cheapest argon2id cost.
    func createWebhookApp(
        url: String, environment: AppEnvironment = .development, rateLimits: [String: RateLimitOverride] = [:],
        _ options: [String: JSONValue] = [:]
    ) async throws -> AppSettings {
        var members: [String: JSONValue] = ["url": .string(url), "secret": .string(tenantSecret), "timeout_ms": .number(10_000)]
        members.merge(options) { $1 }
        return try await createApp(activeKey: true) { app in
            app.environment = environment
            app.credentialTypes = ["webhook"]
            app.rateLimits = rateLimits
            app.plugins = [
                "webhook": .object(members),
                "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
            ]
        }
    }

    func webhookLogin(_ app: AppSettings, user: String, password: String = "right", extra: [String: String] = [:]) async throws -> TestResponse {
        var credentials: [String: any Sendable] = ["type": "webhook", "password": password]
        for (key, value) in extra { credentials[key] = value }
        let body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "user_id": user, "nonce": "n-\(UUID())", "credentials": credentials,
        ]
        return try await test(over: .router) { try await $0.postJSON(body) }
    }

    /// The audit reason of the request `response` answered.
    func auditReason(of response: TestResponse) async throws -> String? {
        let requestID = try #require(response.headers[HTTPField.Name("x-request-id")!])
        return try await auditRows().first { $0.requestID == requestID }?.reason
    }
}

func claims(of response: TestResponse) throws -> [String: Any] {
    let token = try #require(identityToken(in: response))
    let data = try #require(Base64URL.decode(token.split(separator: ".")[1]))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}
