import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PhoneCodePlugin
import PostgresNIO
import StaticUsersPlugin
import Testing

extension PluginRegistry {
    /// Static users beside phone codes; the fake SMS providers listen on loopback.
    static let phoneCodeTests = PluginRegistry([
        StaticUsersPlugin(),
        PhoneCodePlugin(codeKey: Array(repeating: 7, count: 32), senderAddresses: .init(allowsPrivateAddresses: true)),
    ])
}

let webhookSecret = "whsec-0123456789abcdef"
let ada = "+4915112345678"

extension TestGateway {
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
        let app = try await createApp { app in
            app.environment = environment
            app.credentialTypes = ["phone_code"]
            app.plugins = ["phone_code": .object(members)]
            app.rateLimits = rateLimits
        }
        let token = try await adminToken(.operator)
        let bound = try await admin(
            .put, "/admin/v1/apps/\(app.appID)/phone_numbers/%2B4915112345678", token: token,
            json: ["user_id": "ada", "first_name": "Ada"])
        #expect(bound.status == .created, "\(text(bound))")
        return app
    }

    func requestCode(_ app: AppSettings, number: String = ada) async throws -> TestResponse {
        try await test { try await $0.postJSON(["app_id": app.appID.uuid.uuidString, "phone_number": number], to: "/v1/phone_codes") }
    }

    func signIn(_ app: AppSettings, number: String = ada, code: String, userID: String? = nil) async throws -> TestResponse {
        var body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "nonce": "n-\(UUID())",
            "credentials": ["type": "phone_code", "phone_number": number, "code": code],
        ]
        if let userID { body["user_id"] = userID }
        let request = body
        return try await test { try await $0.postJSON(request) }
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
