import Foundation
import GatewayCore
import GatewayCourier
import HTTPTypes
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayRuntime
import PostgresNIO
import GatewayTestSupport
import HummingbirdTesting
import PasswordPlugin
import StaticUsersPlugin
import Testing

@testable import EmailCodePlugin

extension SMTPSink {
    /// An app's `plugins.email_code.sender` for server `name`.
    func sender(_ name: String, tls: String = "starttls", credentials: Bool = true) -> JSONValue {
        var sender: [String: JSONValue] = [
            "type": .string("smtp"), "host": .string("localhost"), "port": .number(Double(ports[name]!)), "tls": .string(tls),
            "timeout_seconds": .number(5),
        ]
        if credentials {
            sender["username"] = .string("mailer")
            sender["password"] = .string(SMTPSink.password)
        }
        return .object(sender)
    }
}

extension PluginRegistry {
    /// Email codes beside the password plugin, whose users' emails they sign
    /// in; SMTP hosts may be private (the sink is on loopback) and trust `caFile`.
    static func emailCodeTests(caFile: String?, firstPause: Duration = .milliseconds(200)) throws -> PluginRegistry {
        let passwords = PasswordPlugin(hasher: PasswordHasher())
        var worker = OutboxWorker.Settings()
        // Retries come quickly, so that a test awaits a second attempt in seconds.
        worker.backoff = Backoff(first: firstPause, longest: max(firstPause, .seconds(300)))
        worker.pollInterval = .milliseconds(100)
        worker.lease = .seconds(20)
        return PluginRegistry([
            StaticUsersPlugin(), passwords,
            try EmailCodePlugin(
                codeKey: Array(repeating: 5, count: 32), accountCodeKey: Array(repeating: 7, count: 32), outboxKey: Array(repeating: 6, count: 32), allowsPrivateAddresses: true,
                extraTrustRoots: caFile, workerSettings: worker, passwords: passwords),
        ])
    }
}

extension GatewayUnderTest {
    /// An app taking email codes sent by `sender`, with password user ada
    /// (`ada@example.com`) and the app's name `name`.
    func createEmailApp(
        sender: JSONValue, name: String = "Test app", _ options: [String: JSONValue] = [:]
    ) async throws -> AppSettings {
        var members = options
        members["sender"] = sender
        if members["from"] == nil { members["from"] = .string("codes@gateway.example") }
        let app = try await createApp(activeKey: true) { app in
            app.name = name
            app.credentialTypes = ["email_code", "password"]
            app.plugins = [
                "email_code": .object(members),
                "password": .object(["argon2": .object(["memory_kib": .number(8192), "iterations": .number(1)])]),
            ]
        }
        let token = try await operatorToken()
        let created = try await admin(
            .put, "/admin/v1/apps/\(app.appID)/users/ada", token: token,
            json: ["password": "analytical engine", "first_name": "Ada", "email": "Ada@Example.com"])
        #expect(created.status == .created, "\(text(created))")
        return app
    }

    func requestEmailCode(_ app: AppSettings, email: String = "ada@example.com", locale: String? = nil) async throws -> TestResponse {
        var body: [String: any Sendable] = ["app_id": app.appID.uuid.uuidString, "email": email]
        body["locale"] = locale
        let request = body
        return try await test(over: .router) { try await $0.postJSON(request, to: "/v1/email_codes") }
    }

    func signInByEmail(_ app: AppSettings, email: String = "ada@example.com", code: String) async throws -> TestResponse {
        let body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "nonce": "n-\(UUID())",
            "credentials": ["type": "email_code", "email": email, "code": code],
        ]
        return try await test(over: .router) { try await $0.postJSON(body) }
    }
}

/// The code in a message's text: its first run of six or more digits.
func sentCode(in message: [String: Any]) -> String? {
    let text = message["text"] as? String ?? ""
    return text.split(whereSeparator: { !$0.isNumber }).map(String.init).first { $0.count >= 6 }
}

extension TestGateway {
    /// The `detail` of each audit row named `event`, oldest first, with its reason.
    func details(of event: String) async throws -> [(reason: String?, detail: [String: String])] {
        let rows = try await client.query(
            "SELECT reason, detail::text FROM audit_events WHERE event = \(event) ORDER BY id", logger: TestDatabase.logger)
        var found: [(reason: String?, detail: [String: String])] = []
        for try await (reason, text) in rows.decode((String?, String?).self) {
            let detail = (try? JSONSerialization.jsonObject(with: Data((text ?? "{}").utf8))) as? [String: String] ?? [:]
            found.append((reason, detail))
        }
        return found
    }
}
