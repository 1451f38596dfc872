import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import Testing

/// A plugin written only against the seam (GatewayPluginKit and GatewayCore)
/// brings its own rate-limit policy, subjects, error code and public route,
/// and the gateway applies them without naming any of them.
@Suite struct PluginSeamTests {
    @Test func aPluginsOwnPolicyLimitsItsOwnSubjectAcrossUserIDs() async throws {
        let gateway = MemoryGateway(plugins: [BadgePlugin()])
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token, credentialTypes: ["badge"], plugins: [:])
        _ = try await gateway.send(.post, "/admin/v1/apps/\(appID)/keys", token: token, json: ["generate": [:] as [String: Int]])
        func attempt(badge: String, pin: String, user: String) async throws -> (HTTPResponse.Status, HTTPFields) {
            let answer = try await gateway.send(
                .post, "/v1/identity_tokens",
                json: ["app_id": appID, "user_id": user, "nonce": "n", "credentials": ["type": "badge", "badge": badge, "pin": pin]])
            return (answer.status, answer.headers)
        }

        // Two failures on one badge, each from another user id (so `user_failures` never sees two).
        #expect(try await attempt(badge: "B-1", pin: "0000", user: "u1").0 == .unauthorized)
        #expect(try await attempt(badge: "B-1", pin: "0000", user: "u2").0 == .unauthorized)
        let (refused, headers) = try await attempt(badge: "B-1", pin: "1234", user: "u3")
        #expect(refused == .tooManyRequests)
        #expect(headers[HTTPField.Name("RateLimit")!]?.hasPrefix(#""badge_failures""#) == true)
        #expect(headers[HTTPField.Name("RateLimit-Policy")!]?.contains(#""badge_failures";q=2;w=900"#) == true)
        // Another badge is another subject.
        #expect(try await attempt(badge: "B-2", pin: "1234", user: "u4").0 == .ok)
        let refusal = try #require(gateway.memory.events.last { $0.reason == "rate_limited" })
        #expect(refusal.detail["policy"] == "badge_failures")
    }

    @Test func anAppMayOverrideAPluginsPolicyAndThePluginsRouteAndErrorCodeAnswer() async throws {
        let gateway = MemoryGateway(plugins: [BadgePlugin()])
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token, credentialTypes: ["badge"], plugins: [:])
        let changed = try await gateway.send(
            .patch, "/admin/v1/apps/\(appID)", token: token,
            json: ["rate_limits": ["badge_failures": ["limit": 1, "period_seconds": 60]]])
        #expect(changed.status == .ok, "\(changed.body)")
        let unknown = try await gateway.send(
            .patch, "/admin/v1/apps/\(appID)", token: token,
            json: ["rate_limits": ["tally_failures": ["limit": 1, "period_seconds": 60]]])
        #expect(unknown.status == .badRequest)
        #expect((unknown.body["message"] as? String)?.contains("badge_failures") == true)

        let revoked = try await gateway.send(.post, "/v1/badges:check", json: ["badge": "B-0"])
        #expect(revoked.status == .forbidden)
        #expect(revoked.body["error"] as? String == "badge_revoked")
        let fine = try await gateway.send(.post, "/v1/badges:check", json: ["badge": "B-7"])
        #expect(fine.status == .ok)
        #expect(fine.body["badge"] as? String == "B-7")
    }
}

/// `credentials: {"type": "badge", "badge", "pin"}`: pin 1234 opens every badge but B-0, which is revoked.
private struct BadgePlugin: CredentialPlugin {
    let credentialType = "badge"

    static func make(_ setup: PluginSetup) -> BadgePlugin? { BadgePlugin() }

    static let rateLimitPolicies = [
        RateLimitPolicy(name: "badge_failures", limit: 2, periodSeconds: 900, counting: .failures)
    ]

    func makeVerifier(
        for app: AppSettings, options: JSONValue, services: PluginServices
    ) throws(GatewayError) -> any CredentialVerifier {
        BadgeVerifier()
    }

    func addPublicRoutes(to router: Router<GatewayRequestContext>, services: RouteServices) {
        router.post("/v1/badges:check") { request, _ in
            let input = try await JSONInput.read(request, maximumBytes: 1024)
            try input.rejectUnknown(allowed: ["badge"])
            let badge = try input.string("badge") ?? ""
            guard badge != "B-0" else { throw GatewayError(.badgeRevoked, .forbidden, "This badge is revoked.") }
            return try AdminResponses.json(["badge": badge])
        }
    }
}

private struct BadgeVerifier: CredentialVerifier {
    func rateLimitSubjects(for credentials: Credentials) -> [String: String] {
        credentials.fields["badge"].map { ["badge_failures": $0] } ?? [:]
    }

    func verify(_ attempt: CredentialAttempt) async throws -> VerificationResult {
        guard let userID = attempt.userID else { throw GatewayError.invalidRequest("user_id is required.") }
        return attempt.credentials.fields["pin"] == "1234" ? .verified(VerifiedIdentity(userID: userID)) : .rejected(reason: "bad_pin")
    }
}

extension GatewayError.Code {
    fileprivate static let badgeRevoked = GatewayError.Code(rawValue: "badge_revoked")
}
