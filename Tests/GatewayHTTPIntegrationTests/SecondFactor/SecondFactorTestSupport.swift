import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// The user's authenticator app, played by pyotp (Tests/Vendors/totp_codes.py):
/// it reads the `otpauth://` URI the gateway answered, never our own TOTP.
struct Authenticator: Sendable {
    let uri: String

    /// The codes pyotp shows at `moment`, by offset in time steps (-3 to 3).
    func codes(at moment: Date = Date()) async throws -> [Int: String] {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Vendors/totp_codes.py")
        let run = try await GatewayProcess.runProgram(
            python, [script.path, uri, String(Int(moment.timeIntervalSince1970))],
            environment: ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()])
        guard run.status == 0,
            let printed = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: String]
        else {
            Issue.record("pyotp refused the URI \(uri): \(run.output)")
            throw CancellationError()
        }
        return Dictionary(uniqueKeysWithValues: printed.map { (Int($0.key)!, $0.value) })
    }

    /// The code shown now.
    func code() async throws -> String { try await codes()[0]! }
}

extension TestGateway {
    /// An app with sessions and the second factor (`requirement`), whose
    /// static users are alice/wonderland, bob and any other user id.
    func createSecondFactorApp(
        _ requirement: SecondFactorSettings.Requirement = .optional, _ configure: (inout AppSettings) -> Void = { _ in }
    ) async throws -> AppSettings {
        try await createSessionApp {
            $0.mfa = SecondFactorSettings(requirement: requirement)
            if case .object(var options) = $0.plugins["static"] {
                options["allow_any_user"] = .bool(true)
                $0.plugins["static"] = .object(options)
            }
            configure(&$0)
        }
    }

    /// A sign-in's first step as `user` (alice with her password, anyone else with none).
    func firstFactor(_ app: AppSettings, user: String = "alice", nonce: String = "nonce-1") async throws -> TokenAnswer {
        var credentials: [String: any Sendable] = ["type": "static"]
        if user == "alice" { credentials["password"] = "wonderland" }
        let body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "user_id": user, "nonce": nonce, "credentials": credentials,
        ]
        return try TokenAnswer(try await test { try await $0.postJSON(body) })
    }

    /// A sign-in's second step: `type` (`totp` or `recovery_code`) with the ticket and code.
    func secondStep(
        _ app: AppSettings, ticket: String?, code: String, type: String = "totp", nonce: String = "nonce-1",
        user: String? = nil
    ) async throws -> TokenAnswer {
        var credentials: [String: any Sendable] = ["type": type, "code": code]
        credentials["mfa_ticket"] = ticket
        var body: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "nonce": nonce, "credentials": credentials]
        body["user_id"] = user
        let sent = body
        return try TokenAnswer(try await test { try await $0.postJSON(sent) })
    }

    /// `POST` to one of the `/v1/mfa/...` routes.
    func mfaRoute(_ path: String, _ body: [String: any Sendable]) async throws -> TokenAnswer {
        try TokenAnswer(try await test { try await $0.postJSON(body, to: path) })
    }

    /// `user` signs in (no second factor yet), enrols a TOTP factor with
    /// their session and confirms it with pyotp's code of the current step.
    /// Answers the authenticator, the recovery codes, the session's refresh
    /// token, and the codes pyotp showed at the confirmation (by step offset):
    /// a sign-in that follows takes `codes[1]`, which stays within the
    /// accepted window even if a step boundary passes meanwhile (`codes[-1]`
    /// would not).
    func enrolledUser(_ app: AppSettings, _ user: String) async throws -> EnrolledUser {
        let signedIn = try await firstFactor(app, user: user)
        let session = try #require(signedIn.refreshToken, "\(signedIn.body)")
        let enrolled = try await mfaRoute("/v1/mfa/totp", ["app_id": app.appID.uuid.uuidString, "refresh_token": session])
        #expect(enrolled.status == .created, "\(enrolled.body)")
        let authenticator = Authenticator(uri: try #require(enrolled.body["otpauth_uri"] as? String))
        let recoveryCodes = try #require(enrolled.body["recovery_codes"] as? [String])
        let codes = try await authenticator.codes()
        let confirmed = try await mfaRoute(
            "/v1/mfa/totp/confirm", ["app_id": app.appID.uuid.uuidString, "refresh_token": session, "code": codes[0]!])
        #expect(confirmed.status == .noContent, "\(confirmed.body)")
        return EnrolledUser(authenticator: authenticator, recoveryCodes: recoveryCodes, session: session, codes: codes)
    }

    /// The audit reason of a refused second step (or first step's challenge).
    func deniedReason(_ answer: TokenAnswer) async throws -> String? {
        try await auditRowsOnceWritten(requestID: answer.requestID, event: "token.denied")
            .first { $0.event == "token.denied" }?.reason
    }
}

/// A user with a confirmed factor (``TestGateway/enrolledUser(_:_:)``).
struct EnrolledUser {
    let authenticator: Authenticator
    let recoveryCodes: [String]
    let session: String
    /// pyotp's codes at the confirmation, by step offset; `codes[0]` confirmed the factor.
    let codes: [Int: String]
    /// The code a sign-in right after the enrolment takes.
    var nextCode: String { codes[1]! }
}

extension TokenAnswer {
    var ticket: String? { body["mfa_ticket"] as? String }
}
