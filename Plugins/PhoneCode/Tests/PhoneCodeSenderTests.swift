import Crypto
import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayOutbound
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PhoneCodePlugin
import PostgresNIO
import Testing

/// Sending a code: through the tenant's webhook or Twilio (local fakes),
/// failed deliveries and the circuit breaker, senders on private addresses,
/// and no code in a log but the log sender's.
@Suite struct PhoneCodeSenderTests {
    @Test func theWebhookGetsASignedRequestAndTheCodeBuysOneToken() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base + "/sms")
                let sent = try await gateway.requestCode(app)
                #expect(sent.status == .accepted)
                // Ended by the gate like every public request: never cached, with the limits' headers.
                #expect(sent.headers[.cacheControl] == "no-store")
                #expect(sent.headers[HTTPField.Name("RateLimit-Policy")!]?.contains("code_sends_number") == true, "\(sent.headers)")
                let answer = try jsonObject(sent)
                #expect(answer["expires_in"] as? Int == 300)
                #expect(answer["resend_after"] as? Int == 60)

                let request = try #require(webhook.requests.first)
                #expect(webhook.requests.count == 1)
                #expect(request.path == "/sms")
                #expect(Set(request.json.keys) == ["app_id", "phone_number", "code", "expires_in"])
                #expect(request.json["app_id"] as? String == app.appID.uuid.lowercasedText)
                #expect(request.json["phone_number"] as? String == ada)
                #expect(request.json["expires_in"] as? Int == 300)
                let code = try #require(request.sentCode)
                #expect(code.count == 6 && code.allSatisfy(\.isNumber))
                let timestamp = try #require(request.headers["x-gateway-timestamp"])
                let mac = HMAC<SHA256>.authenticationCode(
                    for: Data((timestamp + "." + request.body).utf8), using: SymmetricKey(data: Data(webhookSecret.utf8)))
                #expect(request.headers["x-gateway-signature"] == "v1=" + mac.map { String(format: "%02x", $0) }.joined())

                let signedIn = try await gateway.signIn(app, code: code, userID: "ada")
                #expect(signedIn.status == .ok)
                let token = try #require(identityToken(in: signedIn))
                let claims = try #require(ParsedIdentityToken(compact: token)).claims
                #expect(claims["prn"] == .string("ada"))
                #expect(claims["first_name"] == .string("Ada"))
                let again = try await gateway.signIn(app, code: code)
                #expect(again.status == .unauthorized)
                #expect(!text(again).contains(code))
                for row in try await gateway.auditRows() { #expect(!row.text.contains(code)) }
                let reasons = try await gateway.auditRows().map { "\($0.event):\($0.reason ?? "-")" }
                #expect(reasons == ["admin.phone_number.bound:-", "phone_code.sent:-", "token.issued:-", "token.denied:no_live_code"])
            }
        }
    }

    @Test func twilioGetsItsMessagesAPIFormWithBasicAuth() async throws {
        try await FakeHTTPServer.with(statuses: [201]) { base, twilio in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp([
                    "sender": .object([
                        "type": .string("twilio"), "account_sid": .string("AC0123"),
                        "auth_token": .string("twilio-token-0123456789"), "from": .string("+15005550006"),
                        "message": .string("Shop code: {code}"), "base_url": .string(base),
                    ])
                ])
                #expect(try await gateway.requestCode(app).status == .accepted)
                let request = try #require(twilio.requests.first)
                #expect(request.path == "/2010-04-01/Accounts/AC0123/Messages.json")
                #expect(request.headers["authorization"] == "Basic " + Data("AC0123:twilio-token-0123456789".utf8).base64EncodedString())
                #expect(request.headers["content-type"] == "application/x-www-form-urlencoded")
                let form = Dictionary(uniqueKeysWithValues: request.body.split(separator: "&").map { pair in
                    let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                })
                #expect(form["To"] == ada)
                #expect(form["From"] == "+15005550006")
                let code = try #require(request.sentCode)
                #expect(form["Body"] == "Shop code: \(code)")
                #expect(try await gateway.signIn(app, code: code).status == .ok)

                let token = try await gateway.adminToken(.operator)
                let shown = text(try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)", token: token))
                #expect(!shown.contains("twilio-token-0123456789"))
                #expect(shown.contains("********"))
            }
        }
    }

    @Test func aFailedDeliveryIs502WithoutTheProvidersWordsAndIsRetriedOnceOn5xx() async throws {
        try await FakeHTTPServer.with(statuses: [500, 503, 400]) { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                let failed = try await gateway.requestCode(app)
                #expect(failed.status == .badGateway)
                #expect(try errorBody(failed)["error"] as? String == "sms_delivery_failed")
                #expect(!text(failed).contains("provider"))
                #expect(webhook.requests.count == 2)
                let refused = try await gateway.requestCode(app)
                #expect(refused.status == .badGateway)
                #expect(webhook.requests.count == 3, "a 4xx is not retried")
                let reasons = try await gateway.auditRows().filter { $0.event == "phone_code.sent" }.map(\.reason)
                #expect(reasons == ["sms_delivery_failed", "sms_delivery_failed"])
            }
        }
    }

    /// A sender that keeps failing is not called for a cool-down: after five
    /// failed deliveries in a row the app's sends fail at once.
    @Test func aFailingSenderTripsTheAppsCircuitBreaker() async throws {
        try await FakeHTTPServer.with(statuses: Array(repeating: 400, count: 5)) { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base, ["allow_unbound_numbers": .bool(true)])
                for index in 1...5 {
                    #expect(try await gateway.requestCode(app, number: "+491511234560\(index)").status == .badGateway)
                }
                #expect(webhook.requests.count == 5)
                let fast = try await gateway.requestCode(app, number: "+4915112345609")
                #expect(fast.status == .badGateway)
                #expect(webhook.requests.count == 5)
                let rows = try await gateway.auditRows().filter { $0.event == "phone_code.sent" }
                #expect(rows.last?.text.contains("circuit open") == true)
                // Another app's sender is its own.
                let other = try await gateway.createPhoneApp(webhook: base)
                #expect(try await gateway.requestCode(other).status == .accepted)
            }
        }
    }

    /// The breaker is the app's setting (`circuit_breaker`, read as the
    /// webhook plugin reads its own): two failures open it when two are set,
    /// and a setting out of its bounds is refused when the app is saved.
    @Test func theAppSetsItsSendersBreaker() async throws {
        try await FakeHTTPServer.with(statuses: Array(repeating: 400, count: 2)) { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(
                    webhook: base,
                    ["allow_unbound_numbers": .bool(true), "circuit_breaker": .object(["failures": .number(2), "cool_down_seconds": .number(600)])])
                for index in 1...2 {
                    #expect(try await gateway.requestCode(app, number: "+491511234560\(index)").status == .badGateway)
                }
                #expect(try await gateway.requestCode(app, number: "+4915112345609").status == .badGateway)
                #expect(webhook.requests.count == 2, "the third send never left: the breaker opened after two")
                let rows = try await gateway.auditRows().filter { $0.event == "phone_code.sent" }
                #expect(rows.last?.text.contains("circuit open: 2 failed deliveries") == true)
                let token = try await gateway.adminToken(.operator)
                let wrongs: [[String: any Sendable]] = [["failures": 0], ["cool_down_seconds": 3601], ["trips": 1]]
                for wrong in wrongs {
                    let refused = try await gateway.admin(
                        .patch, "/admin/v1/apps/\(app.appID)", token: token,
                        json: ["plugins": ["phone_code": ["sender": ["type": "log"], "circuit_breaker": wrong]]])
                    #expect(refused.status == .badRequest, "\(wrong)")
                    #expect((try errorBody(refused)["message"] as? String)?.contains("circuit_breaker") == true, "\(wrong)")
                }
            }
        }
    }

    /// With private addresses not allowed (the deployment default), a sender
    /// URL on loopback gets nothing: the send is refused as a failed delivery.
    @Test func aSenderOnAPrivateAddressIsRefusedUnlessTheOperatorAllowsIt() async throws {
        let publicOnly = PluginRegistry([
            PhoneCodePlugin(codeKey: Array(repeating: 7, count: 32), senderAddresses: .init(allowsPrivateAddresses: false))
        ])
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: publicOnly) { gateway in
                let byAddress = try await gateway.createPhoneApp(webhook: base)
                let byName = try await gateway.createPhoneApp(webhook: base.replacingOccurrences(of: "127.0.0.1", with: "localhost"))
                for app in [byAddress, byName] {
                    let refused = try await gateway.requestCode(app)
                    #expect(refused.status == .badGateway)
                    #expect(try errorBody(refused)["error"] as? String == "sms_delivery_failed")
                }
                #expect(webhook.requests.isEmpty)
            }
        }
    }

    @Test func noCodeReachesTheLogExceptThroughTheLogSender() async throws {
        try await FakeHTTPServer.with { base, webhook in
            let log = CapturedLog()
            try await MemoryGateway.with(plugins: .phoneCodeTests, logger: log.logger) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                #expect(try await gateway.requestCode(app).status == .accepted)
                let code = try #require(webhook.requests.first?.sentCode)
                #expect(try await gateway.signIn(app, code: code == "000000" ? "111111" : "000000").status == .unauthorized)
                #expect(try await gateway.signIn(app, code: code).status == .ok)
                #expect(!log.text.isEmpty)
                #expect(!log.text.contains(code))
                #expect(!log.text.contains(webhookSecret))

                let logged = try await gateway.createPhoneApp(["sender": .object(["type": .string("log")])])
                try await gateway.deleteCodes()
                #expect(try await gateway.requestCode(logged).status == .accepted)
                #expect(log.text.contains("phone code (log sender, development app)"))
            }
        }
    }
}
