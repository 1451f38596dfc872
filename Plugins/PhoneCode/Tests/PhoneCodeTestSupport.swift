import Foundation
import GatewayCore
import GatewayCourier
import GatewayOutbound
import GatewayPluginKit
import GatewayPluginPostgres
import GatewayRuntime
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PasswordPlugin
@testable import PhoneCodePlugin
import GatewayPostgres
import PostgresNIO
import StaticUsersPlugin
import Testing

extension PluginRegistry {
    /// Static users beside phone codes; the fake SMS providers listen on loopback.
    static let phoneCodeTests = PluginRegistry([
        StaticUsersPlugin(),
        // A generous attempt timeout: with the whole suite on two cores, the fake sender may answer late.
        PhoneCodePlugin(
            codeKey: Array(repeating: 7, count: 32), senderAddresses: .init(allowsPrivateAddresses: true),
            deliveryAttemptTimeout: .seconds(30)),
    ])
}

extension PluginRegistry {
    /// Phone codes beside the password plugin's user directory, which they ask about a number's user.
    static let phoneCodesWithDirectory: PluginRegistry = {
        let passwords = PasswordPlugin(hasher: PasswordHasher())
        return PluginRegistry([
            StaticUsersPlugin(),
            passwords,
            PhoneCodePlugin(
                codeKey: Array(repeating: 7, count: 32), senderAddresses: .init(allowsPrivateAddresses: true),
                deliveryAttemptTimeout: .seconds(30), passwords: passwords),
        ])
    }()
}

let webhookSecret = "whsec-0123456789abcdef"
let ada = "+4915112345678"

extension GatewayUnderTest {
    /// An app accepting phone codes with `options` (a webhook sender to
    /// `webhook` unless `options` names one), `ada` bound to user "ada".
    func createPhoneApp(
        environment: AppEnvironment = .development, webhook: String = "http://127.0.0.1:9/none",
        rateLimits: [String: RateLimitOverride] = [:], _ options: [String: JSONValue] = [:]
    ) async throws -> AppSettings {
        var members = options
        if members["sender"] == nil {
            members["sender"] = .object(["type": .string("webhook"), "url": .string(webhook), "secret": .string(webhookSecret)])
        }
        let app = try await createApp(activeKey: true) { app in
            app.environment = environment
            app.credentialTypes = ["phone_code"]
            app.plugins = ["phone_code": .object(members)]
            app.rateLimits = rateLimits
        }
        let token = try await operatorToken()
        let bound = try await admin(
            .put, "/admin/v1/apps/\(app.appID)/phone_numbers/%2B4915112345678", token: token,
            json: ["user_id": "ada", "first_name": "Ada"])
        #expect(bound.status == .created, "\(text(bound))")
        return app
    }

    /// Moves the sending of every live code (of `number`, when given) `seconds` into the past, as if that long had gone by.
    func backdateCodes(by seconds: Int, of number: String? = nil) async throws {
        switch pluginServices.storage {
        case .database(let database):
            try await database.postgres.query(
                """
                UPDATE phone_codes SET sent_at = sent_at - make_interval(secs => \(seconds))
                WHERE \(number)::text IS NULL OR phone_number = \(number)
                """, logger: TestDatabase.logger)
        case .memory(let memory):
            changeCodes(in: memory, of: number) { $0.sentAt -= TimeInterval(seconds) }
        }
    }

    /// Lets every live code expire.
    func expireCodes() async throws {
        switch pluginServices.storage {
        case .database(let database):
            try await database.postgres.query("UPDATE phone_codes SET expires_at = now() - interval '1 second'", logger: TestDatabase.logger)
        case .memory(let memory):
            changeCodes(in: memory) { $0.expiresAt = Date().addingTimeInterval(-1) }
        }
    }

    /// Forgets every code.
    func deleteCodes() async throws {
        switch pluginServices.storage {
        case .database(let database):
            try await database.postgres.query("DELETE FROM phone_codes", logger: TestDatabase.logger)
        case .memory(let memory):
            memory.table(of: MemoryCodeStore<PhoneCodeTable>.Rows.self, empty: .init()).change { $0.codes = [:] }
        }
    }

    private func changeCodes(
        in memory: PluginMemory, of only: String? = nil, _ change: (inout MemoryCodeStore<PhoneCodeTable>.Code) -> Void
    ) {
        memory.table(of: MemoryCodeStore<PhoneCodeTable>.Rows.self, empty: .init()).change { rows in
            for appID in rows.codes.keys {
                for number in rows.codes[appID, default: [:]].keys where only == nil || only == number {
                    change(&rows.codes[appID]![number]!)
                }
            }
        }
    }

    func requestCode(_ app: AppSettings, number: String = ada) async throws -> TestResponse {
        try await test(over: .router) { try await $0.postJSON(["app_id": app.appID.uuid.uuidString, "phone_number": number], to: "/v1/phone_codes") }
    }

    func signIn(_ app: AppSettings, number: String = ada, code: String, userID: String? = nil) async throws -> TestResponse {
        var body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "nonce": "n-\(UUID())",
            "credentials": ["type": "phone_code", "phone_number": number, "code": code],
        ]
        if let userID { body["user_id"] = userID }
        let request = body
        return try await test(over: .router) { try await $0.postJSON(request) }
    }
}

extension FakeHTTPServer.Recorded {
    /// The JSON body as an object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }

    /// The code the gateway sent, from a webhook body or a Twilio message.
    var sentCode: String? {
        if let code = json["code"] as? String { return code }
        let text = body.removingPercentEncoding ?? body
        return text.split(whereSeparator: { !$0.isNumber }).map(String.init).first { $0.count == 6 }
    }
}
