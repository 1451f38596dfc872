import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PasskeyPlugin
import StaticUsersPlugin
import PasskeyTestSupport
import Testing

let passkeyPlugins = PluginRegistry([StaticUsersPlugin(), PasskeyPlugin()])

/// The bytes of a base64url string in an answer.
func base64URLBytes(_ value: Any?) throws -> [UInt8] {
    let text = try #require(value as? String, "not a string: \(String(describing: value))")
    return Array(try #require(Base64URL.decode(text), "not base64url: \(text)"))
}

/// An answer's status and JSON body.
struct Answer {
    let status: HTTPResponse.Status
    let json: [String: Any]
    let requestID: String

    init(_ response: TestResponse) throws {
        status = response.status
        let bytes = Data(response.body.readableBytesView)
        json = bytes.isEmpty ? [:] : try JSONSerialization.jsonObject(with: bytes) as? [String: Any] ?? [:]
        requestID = response.headers[HTTPField.Name("x-request-id")!] ?? ""
    }

    var text: String { "\(status.code) \(json)" }
}

extension GatewayUnderTest {
    static var rpID: String { "example.com" }
    static var origin: String { "https://example.com" }

    /// A development app with static users (alice/wonderland), sessions on, and passkeys for example.com;
    /// with `mfa`, the second factor too.
    func createPasskeyApp(_ options: [String: JSONValue] = [:], mfa: SecondFactorSettings? = nil) async throws -> AppSettings {
        try await createApp(activeKey: true) { app in
            app.credentialTypes = ["static", "passkey"]
            app.sessions = SessionSettings()
            app.mfa = mfa
            app.plugins["passkey"] = .object(["rp_id": .string(Self.rpID)].merging(options) { $1 })
            app.rateLimits = [
                "ip": RateLimitOverride(limit: 100_000, periodSeconds: 60),
                "passkey_challenges": RateLimitOverride(limit: 100_000, periodSeconds: 60),
                // The races send one user's sign-ins by the hundred; failures are not what they count.
                "user_failures": RateLimitOverride(limit: 100_000, periodSeconds: 60),
            ]
        }
    }

    func post(_ body: [String: any Sendable], to path: String) async throws -> Answer {
        try Answer(try await test(over: .router) { try await $0.postJSON(body, to: path) })
    }

    /// Alice signs in with her password: her session's refresh token.
    func aliceSession(_ app: AppSettings) async throws -> String {
        let answer = try await post(aliceRequest(app, nonce: "n-\(UUID())"), to: "/v1/identity_tokens")
        return try #require(answer.json["refresh_token"] as? String, "\(answer.text)")
    }

    /// Registers `authenticator` for the holder of `refreshToken`; the answer.
    func register(
        _ authenticator: SoftwareAuthenticator, _ app: AppSettings, refreshToken: String, origin: String = origin,
        bend: (inout SoftwareAuthenticator.Registration) -> Void = { _ in }
    ) async throws -> Answer {
        let request = try await registrationRequest(authenticator, app, refreshToken: refreshToken, origin: origin, bend: bend)
        return try await post(request, to: "/v1/passkeys")
    }

    /// The body of `authenticator`'s registration for the holder of
    /// `refreshToken`, on a challenge asked for now; not sent.
    func registrationRequest(
        _ authenticator: SoftwareAuthenticator, _ app: AppSettings, refreshToken: String, origin: String = origin,
        bend: (inout SoftwareAuthenticator.Registration) -> Void = { _ in }
    ) async throws -> [String: any Sendable] {
        let appID = app.appID.uuid.uuidString
        let options = try await post(["app_id": appID, "refresh_token": refreshToken], to: "/v1/passkeys/registration_options")
        try #require(options.status == .ok, "\(options.text)")
        let challenge = try base64URLBytes(options.json["challenge"])
        var registration = authenticator.register(challenge: Array(challenge), rpID: Self.rpID, origin: origin)
        bend(&registration)
        return [
            "app_id": appID, "refresh_token": refreshToken, "name": "Alice's phone",
            "credential_id": Base64URL.encode(registration.credentialID),
            "client_data_json": Base64URL.encode(registration.clientDataJSON),
            "attestation_object": Base64URL.encode(registration.attestationObject),
        ]
    }

    /// Registers `authenticator` for `user` through the admin API (bound to no session); the answer.
    func registerByAdmin(_ authenticator: SoftwareAuthenticator, _ app: AppSettings, user: String) async throws -> Answer {
        let path = "/admin/v1/apps/\(app.appID.uuid)/users/\(user)/passkeys"
        let token = try await operatorToken()
        let options = try Answer(try await admin(.post, path + ":registration_options", token: token, json: nil))
        try #require(options.status == .ok, "\(options.text)")
        let registration = authenticator.register(
            challenge: Array(try base64URLBytes(options.json["challenge"])), rpID: Self.rpID, origin: Self.origin)
        return try Answer(
            try await admin(
                .post, path, token: token,
                json: [
                    "client_data_json": Base64URL.encode(registration.clientDataJSON),
                    "attestation_object": Base64URL.encode(registration.attestationObject),
                ]))
    }

    /// A sign-in challenge for the app.
    func signInChallenge(_ app: AppSettings) async throws -> [UInt8] {
        let options = try await post(["app_id": app.appID.uuid.uuidString], to: "/v1/passkeys/authentication_options")
        try #require(options.status == .ok, "\(options.text)")
        return try base64URLBytes(options.json["challenge"])
    }

    /// The token request of `assertion`.
    static func passkeyRequest(_ app: AppSettings, _ assertion: SoftwareAuthenticator.Assertion, nonce: String = "n-\(UUID())")
        -> [String: any Sendable]
    {
        [
            "app_id": app.appID.uuid.uuidString, "nonce": nonce,
            "credentials": [
                "type": "passkey", "credential_id": Base64URL.encode(assertion.credentialID),
                "client_data_json": Base64URL.encode(assertion.clientDataJSON),
                "authenticator_data": Base64URL.encode(assertion.authenticatorData),
                "signature": Base64URL.encode(assertion.signature), "user_handle": Base64URL.encode(assertion.userHandle),
            ],
        ]
    }

    /// The user handle the gateway gave `userID` (from a registration's options).
    func userHandle(of refreshToken: String, _ app: AppSettings) async throws -> [UInt8] {
        let options = try await post(
            ["app_id": app.appID.uuid.uuidString, "refresh_token": refreshToken], to: "/v1/passkeys/registration_options")
        let user = try #require(options.json["user"] as? [String: Any])
        return try base64URLBytes(user["id"])
    }

    /// The audit reason of the request `answer` answered, once its row is written.
    func reason(of answer: Answer, event: String) async throws -> String? {
        try await auditRowsOnceWritten(requestID: answer.requestID, event: event).first { $0.event == event }?.reason
    }
}
