public import Foundation
public import GatewayCore
public import HTTPTypes
public import HummingbirdTesting
import NIOCore
import Testing

/// What a test reads of a token answer.
public struct TokenAnswer {
    public let status: HTTPResponse.Status
    public let body: [String: Any]
    public let requestID: String

    public var token: String? { body["identity_token"] as? String }
    public var refreshToken: String? { body["refresh_token"] as? String }
    public var sessionID: String? { body["session_id"] as? String }
    public var error: String? { body["error"] as? String }

    public init(_ response: TestResponse) throws {
        status = response.status
        let bytes = Data(response.body.readableBytesView)
        body = bytes.isEmpty ? [:] : try JSONSerialization.jsonObject(with: bytes) as? [String: Any] ?? [:]
        requestID = response.headers[HTTPField.Name("x-request-id")!] ?? ""
    }

    /// The identity token's claims, decoded without checking it (the token tests check it).
    public var claims: [String: Any] {
        guard let token, let payload = token.split(separator: ".").dropFirst().first, let data = Base64URL.decode(payload),
            let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [:] }
        return claims
    }
}

/// One session as a test reads it back from where the gateway keeps it.
public struct SessionState: Sendable, Equatable {
    public let generation: Int64
    public let revokedReason: String?
    /// Revoked, or past its idle or absolute end.
    public let ended: Bool

    public init(generation: Int64, revokedReason: String?, ended: Bool) {
        self.generation = generation
        self.revokedReason = revokedReason
        self.ended = ended
    }
}

/// Which end of a session a test moves into the past.
public enum SessionEnd: Sendable {
    /// Unused for longer than the idle timeout.
    case idle
    /// Past its absolute lifetime.
    case absolute
}

extension GatewayUnderTest {
    /// A development app with static users (alice/wonderland, bob) and sessions on.
    public func createSessionApp(
        _ settings: SessionSettings = SessionSettings(), _ configure: (inout AppSettings) -> Void = { _ in }
    ) async throws -> AppSettings {
        try await createApp(activeKey: true) {
            $0.sessions = settings
            $0.rateLimits = ["ip": RateLimitOverride(limit: 100_000, periodSeconds: 60)]
            configure(&$0)
        }
    }

    /// Alice signs in with her password (under `nonce`), naming her device.
    public func signIn(_ app: AppSettings, nonce: String = "sign-in-\(UUID())", device: String? = nil) async throws
        -> TokenAnswer
    {
        var body = aliceRequest(app, nonce: nonce)
        body["device_label"] = device
        let sent = body
        return try TokenAnswer(try await test(over: .router) { try await $0.postJSON(sent) })
    }

    /// A refresh with `refreshToken` under a new nonce.
    public func refresh(
        _ app: AppSettings, _ refreshToken: String?, nonce: String = "challenge-\(UUID())", user: String? = nil
    ) async throws -> TokenAnswer {
        var credentials: [String: any Sendable] = ["type": "refresh_token"]
        credentials["refresh_token"] = refreshToken
        var body: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "nonce": nonce, "credentials": credentials]
        body["user_id"] = user
        let sent = body
        return try TokenAnswer(try await test(over: .router) { try await $0.postJSON(sent) })
    }

    /// The audit reason of the request `answer` answered.
    public func reason(of answer: TokenAnswer) async throws -> String? {
        let event = answer.status == .ok ? "token.issued" : "token.denied"
        return try await auditRowsOnceWritten(requestID: answer.requestID, event: event).first { $0.event == event }?.reason
    }
}
