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

/// SMS codes traded for tokens: their tries, expiry, limits, races, test
/// numbers and unbound numbers (the senders: PhoneCodeSenderTests).
@Suite struct PhoneCodeTests {
    @Test func fiveWrongTriesKillTheCode() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                #expect(try await gateway.requestCode(app).status == .accepted)
                let code = try #require(webhook.requests.first?.sentCode)
                let wrong = code == "000000" ? "111111" : "000000"
                for _ in 0..<5 { #expect(try await gateway.signIn(app, code: wrong).status == .unauthorized) }
                #expect(try await gateway.signIn(app, code: code).status == .unauthorized)
                let reasons = try await gateway.auditRows().filter { $0.event == "token.denied" }.compactMap(\.reason)
                #expect(reasons == ["bad_code", "bad_code", "bad_code", "bad_code", "bad_code_exhausted", "no_live_code"])
            }
        }
    }

    @Test func failedCodesAreLimitedPerNumberAndANewCodeReplacesTheOld() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base, ["resend_after_seconds": .number(10)])
                let token = try await gateway.adminToken(.operator)
                let limited = try await gateway.admin(
                    .patch, "/admin/v1/apps/\(app.appID)", token: token,
                    json: ["rate_limits": ["phone_failures": ["limit": 2, "period_seconds": 900]]])
                #expect(limited.status == .ok)
                gateway.tenants.invalidate(app.appID)
                #expect(try await gateway.requestCode(app).status == .accepted)
                let first = try #require(webhook.requests.last?.sentCode)
                try await gateway.backdateCodes(by: 60)
                #expect(try await gateway.requestCode(app).status == .accepted)
                let second = try #require(webhook.requests.last?.sentCode)
                // The old code no longer works (in the one-in-a-million case that both are equal, a wrong code stands in).
                let replaced = first != second ? first : (first == "000000" ? "111111" : "000000")
                #expect(try await gateway.signIn(app, code: replaced).status == .unauthorized, "the old code is replaced")
                #expect(try await gateway.signIn(app, code: second == "000000" ? "111111" : "000000").status == .unauthorized)
                let over = try await gateway.signIn(app, code: second)
                #expect(over.status == .tooManyRequests, "two failures for this number already")
                #expect(over.headers[.retryAfter] != nil)
            }
        }
    }

    @Test func anExpiredCodeIsRefused() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                #expect(try await gateway.requestCode(app).status == .accepted)
                let code = try #require(webhook.requests.first?.sentCode)
                try await gateway.expireCodes()
                #expect(try await gateway.signIn(app, code: code).status == .unauthorized)
            }
        }
    }

    @Test func concurrentUsesOfOneCodeYieldAtMostOneToken() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                #expect(try await gateway.requestCode(app).status == .accepted)
                let code = try #require(webhook.requests.first?.sentCode)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<10 { group.addTask { try await gateway.signIn(app, code: code).status.code } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 1)
                #expect(statuses.filter { $0 == 401 }.count == 9)
            }
        }
    }

    /// The resend delay refuses an early request without counting it as a
    /// send; the hourly cap counts codes that went out (a test number's
    /// answer counts as one, like any send).
    @Test func resendCooldownAndHourlyCapAnswer429WithRetryAfter() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let tester = "+15005550006"
                let app = try await gateway.createPhoneApp(
                    webhook: base,
                    ["test_numbers": .array([.object(["phone_number": .string(tester), "code": .string("123456")])])])
                let token = try await gateway.adminToken(.operator)
                let capped = try await gateway.admin(
                    .patch, "/admin/v1/apps/\(app.appID)", token: token,
                    json: ["rate_limits": ["code_sends_number": ["limit": 2, "period_seconds": 3600]]])
                #expect(capped.status == .ok)
                gateway.tenants.invalidate(app.appID)

                #expect(try await gateway.requestCode(app).status == .accepted)
                for _ in 0..<3 {
                    let soon = try await gateway.requestCode(app)
                    #expect(soon.status == .tooManyRequests)
                    let wait = try #require(soon.headers[.retryAfter].flatMap { Int($0) })
                    #expect(wait > 0 && wait <= 60)
                }
                #expect(try await gateway.requestCode(app, number: tester).status == .accepted)
                #expect(try await gateway.requestCode(app, number: tester).status == .accepted)
                let over = try await gateway.requestCode(app, number: tester)
                #expect(over.status == .tooManyRequests)
                #expect(over.headers[HTTPField.Name("RateLimit-Policy")!]?.contains("code_sends_number") == true)
                #expect(over.headers[.retryAfter] != nil)
                #expect(webhook.requests.count == 1)
                let reasons = try await gateway.auditRows().filter { $0.event == "phone_code.sent" }.map(\.reason)
                #expect(reasons == [nil, "resend_too_soon", "resend_too_soon", "resend_too_soon", nil, nil, "rate_limited"])
            }
        }
    }

    @Test func concurrentRequestsForOneNumberSendOneCode() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<10 { group.addTask { try await gateway.requestCode(app).status.code } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 202 }.count == 1, "\(statuses)")
                #expect(statuses.filter { $0 == 429 }.count == 9, "\(statuses)")
                #expect(webhook.requests.count == 1)
                // The one code sent is the one stored: it buys a token.
                let code = try #require(webhook.requests.first?.sentCode)
                #expect(try await gateway.signIn(app, code: code).status == .ok)
            }
        }
    }

    @Test func testNumbersSendNothingAndNeedAnExpiryInProduction() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let testNumber: JSONValue = .array([.object(["phone_number": .string(ada), "code": .string("424242")])])
                let app = try await gateway.createPhoneApp(webhook: base, ["test_numbers": testNumber])
                #expect(try await gateway.requestCode(app).status == .accepted)
                #expect(webhook.requests.isEmpty)
                #expect(try await gateway.signIn(app, code: "424243").status == .unauthorized)
                #expect(try await gateway.signIn(app, code: "424242").status == .ok)

                let token = try await gateway.adminToken(.operator)
                var body = newAppBody()
                body["environment"] = "production"
                body["credential_types"] = ["phone_code"]
                let sender: [String: any Sendable] = ["type": "webhook", "url": base, "secret": webhookSecret]
                let noExpiry: [String: any Sendable] = ["sender": sender, "test_numbers": [["phone_number": ada, "code": "424242"]]]
                body["plugins"] = ["phone_code": noExpiry] as [String: any Sendable]
                let refused = try await gateway.admin(.post, "/admin/v1/apps", token: token, json: body)
                #expect(refused.status == .badRequest)
                #expect(text(refused).contains("expires_at is required"))
                let expiring: [String: any Sendable] = [
                    "sender": sender,
                    "test_numbers": [["phone_number": ada, "code": "424242", "expires_at": "2099-01-01T00:00:00Z"]],
                ]
                body["plugins"] = ["phone_code": expiring] as [String: any Sendable]
                #expect(try await gateway.admin(.post, "/admin/v1/apps", token: token, json: body).status == .created)
            }
        }
    }

    @Test func aNumberOutsideTheAllowlistIsRefusedBeforeAnythingIsSent() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base, ["allowed_prefixes": .array([.string("+49")])])
                let refused = try await gateway.requestCode(app, number: "+14155550123")
                #expect(refused.status == .forbidden)
                #expect(try errorBody(refused)["error"] as? String == "phone_number_not_allowed")
                #expect(try await gateway.requestCode(app).status == .accepted)
                #expect(webhook.requests.count == 1)
                for number in ["4915112345678", "+0123456789", "+49 151 1234", "+1234567", "+12345678901234567"] {
                    let malformed = try await gateway.requestCode(app, number: number)
                    #expect(malformed.status == .badRequest, "\(number)")
                    #expect((try errorBody(malformed)["message"] as? String)?.hasPrefix("phone_number must be an E.164 number") == true)
                }
                let missing = try await gateway.test {
                    try await $0.postJSON(["app_id": app.appID.uuid.uuidString], to: "/v1/phone_codes")
                }
                #expect(try errorBody(missing)["message"] as? String == "phone_number is required.")
            }
        }
    }

    @Test func unboundNumbersGetTheSameAnswerButNoSMSUnlessTheAppSignsThemIn() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let strict = try await gateway.createPhoneApp(webhook: base)
                let bound = try await gateway.requestCode(strict)
                let unbound = try await gateway.requestCode(strict, number: "+4915199999999")
                #expect(unbound.status == bound.status)
                #expect(text(unbound) == text(bound))
                #expect(webhook.requests.count == 1)

                let open = try await gateway.createPhoneApp(webhook: base, ["allow_unbound_numbers": .bool(true)])
                #expect(try await gateway.requestCode(open, number: "+4915199999999").status == .accepted)
                let code = try #require(webhook.requests.last?.sentCode)
                #expect(try await gateway.signIn(open, number: "+4915199999999", code: code, userID: "someone").status == .unauthorized)
                #expect(try await gateway.requestCode(open, number: "+4915199999999").status == .tooManyRequests)
                try await gateway.backdateCodes(by: 120)
                #expect(try await gateway.requestCode(open, number: "+4915199999999").status == .accepted)
                let second = try #require(webhook.requests.last?.sentCode)
                let signedIn = try await gateway.signIn(open, number: "+4915199999999", code: second)
                #expect(signedIn.status == .ok)
                let token = try #require(identityToken(in: signedIn))
                let claims = try #require(ParsedIdentityToken(compact: token)).claims
                #expect(claims["prn"] == .string("+4915199999999"))
                // Signed in as itself, the number has no binding for its session to lose.
                let verifier = try await gateway.tenants.tenant(for: open.appID).verifier(for: "phone_code")
                #expect(try await verifier.lapse(of: VerifiedIdentity(userID: "+4915199999999"), in: open) == nil)
            }
        }
    }

    /// The code has left by the time its row is written, so a slow audit write does not turn the answer
    /// into an error: the row is kept in memory and written once PostgreSQL lets it.
    @Test func aSentCodeIsAnsweredWhileItsAuditRowWaits() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await TestGateway.with(plugins: .phoneCodeTests, rateLimits: RateLimitSettings(isEnabled: false), auditWriteTimeout: .seconds(1)) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base + "/sms")
                let (sent, kept) = try await gateway.whileAuditWritesWait {
                    (try await gateway.requestCode(app), gateway.ledger.keptCount)
                }
                #expect(sent.status == .accepted)
                #expect(webhook.requests.count == 1)
                #expect(kept == 1)
                let requestID = try #require(sent.headers[HTTPField.Name("x-request-id")!])
                let rows = try await gateway.auditRowsOnceWritten(requestID: requestID, event: "phone_code.sent")
                #expect((1...2).contains(rows.count), "once, unless the kept write raced the first attempt")
                #expect(rows.allSatisfy { $0.event == "phone_code.sent" && $0.reason == nil && $0.userID == "ada" })
            }
        }
    }
}
