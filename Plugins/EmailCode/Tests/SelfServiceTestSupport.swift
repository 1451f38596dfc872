import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

extension RateLimitSettings {
    /// The deployment's limits with the client's own budgets out of the way
    /// (every request of a router test comes from one client); `changes` tighten the rest.
    static func selfServiceTests(_ changes: [RateLimitPolicy] = []) -> RateLimitSettings {
        var settings = RateLimitSettings()
        for policy in [
            RateLimitPolicy.clientIP.with(limit: 1_000_000, periodSeconds: 60),
            RateLimitPolicy.signUpsPerIP.with(limit: 1_000_000, periodSeconds: 3600),
            RateLimitPolicy.emailSendsPerIP.with(limit: 1_000_000, periodSeconds: 3600),
            RateLimitPolicy.emailSendsPerAddress.with(limit: 1_000, periodSeconds: 3600),
            RateLimitPolicy.accountCodeFailures.with(limit: 1_000, periodSeconds: 900),
        ] + changes {
            settings.policies[policy.name] = policy
        }
        return settings
    }
}

extension TestGateway {
    /// An app whose users serve themselves (every flow on, `signUp` as
    /// given), with sessions, an optional second factor, email codes mailed
    /// to the sink's STARTTLS server and cheap password hashes.
    func createSelfServiceApp(
        _ sink: SMTPSink, signUp: SelfServiceSettings.SignUp = .verifiedEmail, attempts: Int = 5,
        _ configure: (inout AppSettings) -> Void = { _ in }
    ) async throws -> AppSettings {
        try await createApp(activeKey: true) { app in
            app.name = "Shop"
            app.credentialTypes = ["password", "email_code"]
            app.plugins = [
                "email_code": .object(["sender": sink.sender("starttls"), "from": .string("accounts@shop.example")]),
                "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
            ]
            app.sessions = SessionSettings()
            app.mfa = SecondFactorSettings(requirement: .optional)
            app.selfService = SelfServiceSettings(
                signUp: signUp, passwordReset: true, emailChange: true, accountDeletion: true, maximumAttempts: attempts)
            configure(&app)
        }
    }

    /// `POST /v1/accounts/<path>` with `body` and the app's id.
    func account(_ path: String, _ app: AppSettings, _ body: [String: any Sendable]) async throws -> TestResponse {
        var sent = body
        sent["app_id"] = app.appID.uuid.uuidString
        let request = sent
        return try await test(over: .router) { try await $0.postJSON(request, to: "/v1/accounts/" + path) }
    }

    /// A password sign-in of `email`'s account by its user id, with sessions on.
    func passwordSignIn(_ app: AppSettings, _ userID: String, _ password: String) async throws -> TokenAnswer {
        let body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "user_id": userID, "nonce": "n-\(UUID())",
            "credentials": ["type": "password", "password": password],
        ]
        return try TokenAnswer(try await test(over: .router) { try await $0.postJSON(body) })
    }

    /// The user id the directory has for `email`, nil when none.
    func userID(ofEmail email: String, in app: AppSettings) async throws -> String? {
        let rows = try await client.query(
            "SELECT user_id FROM password_users WHERE app_id = \(app.appID.uuid) AND lower(email) = \(email.lowercased())",
            logger: TestDatabase.logger)
        for try await userID in rows.decode(String.self) { return userID }
        return nil
    }

    /// Returns once the outbox holds no queued message (within 60 s).
    func outboxDrained() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let rows = try await client.query("SELECT count(*)::int FROM outbox WHERE state = 'queued'", logger: TestDatabase.logger)
            for try await queued in rows.decode(Int.self) where queued == 0 { return }
            try await Task.sleep(for: .milliseconds(50))  // polling: the workers deliver on their own schedule
        }
        Issue.record("the outbox did not drain in 60 s")
    }

    /// Makes the live self-service codes of `app` older than any resend delay.
    func ageAccountCodes(_ app: AppSettings) async throws {
        try await client.query(
            "UPDATE account_codes SET sent_at = now() - interval '1 hour' WHERE app_id = \(app.appID.uuid)",
            logger: TestDatabase.logger)
    }
}

extension SMTPSink {
    /// The code of the last message (of at least `count` in all) sent to `address` (lower case) whose subject starts with `subject`.
    func code(to address: String, subject: String, count: Int) async throws -> String {
        let messages = try await messages(atLeast: count)
        let matching = messages.filter {
            ($0["rcpt_tos"] as? [String])?.contains { $0.lowercased() == address } == true
                && ($0["subject"] as? String)?.hasPrefix(subject) == true
        }
        return try #require(matching.last.flatMap(sentCode(in:)), "no '\(subject)' message to \(address) in \(messages.count)")
    }
}

/// The RFC 4648 base32 of an `otpauth://` secret, decoded: the test's
/// authenticator for a factor it must confirm (pyotp judges the TOTP
/// itself in SecondFactorFlowTests).
func base32Decoded(_ text: String) -> [UInt8] {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    var bytes: [UInt8] = []
    var buffer = 0
    var bits = 0
    for character in text.uppercased() where character != "=" {
        guard let value = alphabet.firstIndex(of: character) else { continue }
        buffer = buffer << 5 | value
        bits += 5
        if bits >= 8 {
            bits -= 8
            bytes.append(UInt8(truncatingIfNeeded: buffer >> bits))
        }
    }
    return bytes
}
