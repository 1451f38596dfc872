import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// What a test reads of a token answer.
struct TokenAnswer {
    let status: HTTPResponse.Status
    let body: [String: Any]
    let requestID: String

    var token: String? { body["identity_token"] as? String }
    var refreshToken: String? { body["refresh_token"] as? String }
    var sessionID: String? { body["session_id"] as? String }
    var error: String? { body["error"] as? String }

    init(_ response: TestResponse) throws {
        status = response.status
        let bytes = Data(response.body.readableBytesView)
        body = bytes.isEmpty ? [:] : try JSONSerialization.jsonObject(with: bytes) as? [String: Any] ?? [:]
        requestID = response.headers[HTTPField.Name("x-request-id")!] ?? ""
    }

    /// The identity token's claims, decoded without checking it (the token tests check it).
    var claims: [String: Any] {
        guard let token, let payload = token.split(separator: ".").dropFirst().first, let data = Base64URL.decode(payload),
            let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return claims
    }
}

extension TestGateway {
    /// A development app with static users (alice/wonderland, bob) and sessions on.
    func createSessionApp(_ settings: SessionSettings = SessionSettings(), _ configure: (inout AppSettings) -> Void = { _ in })
        async throws -> AppSettings
    {
        try await createApp {
            $0.sessions = settings
            $0.rateLimits = ["ip": RateLimitOverride(limit: 100_000, periodSeconds: 60)]
            configure(&$0)
        }
    }

    /// Alice signs in with her password (under `nonce`), naming her device.
    func signIn(_ app: AppSettings, nonce: String = "sign-in-\(UUID())", device: String? = nil) async throws -> TokenAnswer {
        var body = aliceRequest(app, nonce: nonce)
        body["device_label"] = device
        let sent = body
        return try TokenAnswer(try await test { try await $0.postJSON(sent) })
    }

    /// A refresh with `refreshToken` under a new nonce.
    func refresh(_ app: AppSettings, _ refreshToken: String?, nonce: String = "challenge-\(UUID())", user: String? = nil)
        async throws -> TokenAnswer
    {
        var credentials: [String: any Sendable] = ["type": "refresh_token"]
        credentials["refresh_token"] = refreshToken
        var body: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "nonce": nonce, "credentials": credentials]
        body["user_id"] = user
        let sent = body
        return try TokenAnswer(try await test { try await $0.postJSON(sent) })
    }

    /// Moves the session's clock back `seconds`, as if that long had passed
    /// since its last rotation (and its start).
    func age(session sessionID: String, by seconds: Int) async throws {
        try await client.query(
            """
            UPDATE sessions SET rotated_at = rotated_at - \(seconds) * interval '1 second',
                created_at = created_at - \(seconds) * interval '1 second',
                last_used_at = last_used_at - \(seconds) * interval '1 second',
                idle_expires_at = idle_expires_at - \(seconds) * interval '1 second',
                expires_at = expires_at - \(seconds) * interval '1 second'
            WHERE session_id = \(UUID(uuidString: sessionID)!)
            """, logger: TestDatabase.logger)
    }

    /// The session's generation and whether it has ended.
    func sessionState(_ sessionID: String) async throws -> (generation: Int64, revokedReason: String?, ended: Bool)? {
        let rows = try await client.query(
            """
            SELECT generation, revoked_reason, NOT (revoked_at IS NULL AND expires_at > now() AND idle_expires_at > now())
            FROM sessions WHERE session_id = \(UUID(uuidString: sessionID)!)
            """, logger: TestDatabase.logger)
        for try await (generation, reason, ended) in rows.decode((Int64, String?, Bool).self) { return (generation, reason, ended) }
        return nil
    }

    /// The audit reason of the request `answer` answered.
    func reason(of answer: TokenAnswer) async throws -> String? {
        let event = answer.status == .ok ? "token.issued" : "token.denied"
        return try await auditRowsOnceWritten(requestID: answer.requestID, event: event).first { $0.event == event }?.reason
    }
}
