import Foundation
import GatewayCore
import GatewayCourier
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
@testable import PhoneCodePlugin
import Synchronization
import Testing

/// Send protection on the phone-code route, attacked as its docs promise it
/// holds: a pumping run from many addresses, the budget and the breaker over
/// two instances, a human check against a stand-in of Turnstile's
/// siteverify, the country policy, and who may loosen it. Each counts what
/// reached the SMS provider, not only what the client was answered.
@Suite struct SendProtectionTests: ConcurrentAttack {
    /// 2 000 code requests to numbers in one prefix from 500 client
    /// addresses (each under `code_sends_ip`), with 100 to ten other prefixes
    /// among them: the prefix's breaker trips at `minimum_sends` (the
    /// threshold of a prefix with no history), the other prefixes all pass,
    /// and the trip is audited once. An app admin may not release it; an
    /// operator may, and the next send goes out.
    @Test func pumpingOnePrefixTripsItsBreakerAndSparesTheOtherPrefixes() async throws {
        let trusted = RateLimitSettings(trustedProxies: [CIDR("127.0.0.1/32")!])
        try await FakeHTTPServer.with { base, sms in
            try await TestGateway.with(plugins: .phoneCodeTests, rateLimits: trusted) { gateway in
                let app = try await gateway.createPhoneApp(
                    webhook: base,
                    members(["allow_unbound_numbers": true, "send_protection": ["breaker": ["minimum_sends": 20, "prefix_digits": 6]]]))
                let pumped = "+491555", others = (0..<10).map { "+3361\($0)0" }
                // Eight clients at once, one a connection of the test client's pool (it holds
                // eight): a ninth would wait for a connection, and that wait has a limit of its
                // own (10 s) that a loaded machine reaches.
                let answers = try await gateway.test(over: .ahc(.http)) { client in
                    try await withThrowingTaskGroup(of: [(pumped: Bool, status: Int)].self) { group in
                        for worker in 0..<8 {
                            group.addTask {
                                var answers: [(pumped: Bool, status: Int)] = []
                                for index in stride(from: worker, to: 2100, by: 8) {
                                    let isPumped = index % 21 != 20
                                    let number =
                                        isPumped
                                        ? pumped + String(format: "%07d", index)
                                        : others[index / 21 % 10] + String(format: "%06d", index)
                                    let address = index % 500 < 250 ? "198.51.100.\(index % 500)" : "203.0.113.\(index % 500 - 250)"
                                    let response = try await client.postJSON(
                                        ["app_id": app.appID.description, "phone_number": number], to: "/v1/phone_codes",
                                        headers: [HTTPField.Name("x-forwarded-for")!: address])
                                    answers.append((isPumped, Int(response.status.code)))
                                }
                                return answers
                            }
                        }
                        return try await group.reduce(into: []) { $0 += $1 }
                    }
                }
                let pumpedAnswers = answers.filter(\.pumped).map(\.status)
                let otherAnswers = answers.filter { !$0.pumped }.map(\.status)
                #expect(pumpedAnswers.count == 2000)
                #expect(count(pumpedAnswers, 202) == 20)
                #expect(count(pumpedAnswers, 429) == 1980)
                #expect(otherAnswers.count == 100 && count(otherAnswers, 202) == 100)
                let delivered = sms.requests.compactMap { $0.json["phone_number"] as? String }
                #expect(delivered.filter { $0.hasPrefix(pumped) }.count == 20)
                #expect(delivered.filter { !$0.hasPrefix(pumped) }.count == 100)
                let rows = try await gateway.auditRows()
                #expect(rows.filter { $0.event == "send_breaker.tripped" }.count == 1)
                #expect(rows.filter { $0.reason == "send_breaker_open" }.count == 1980)

                // The admin API shows it open; only an operator releases it, and the next send goes out.
                let operatorToken = try await gateway.operatorToken()
                let listed = try jsonObject(
                    try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/send_breakers", token: operatorToken))
                let breakers = try #require(listed["send_breakers"] as? [[String: Any]])
                #expect(breakers.count == 1)
                #expect(breakers.first?["prefix"] as? String == pumped && breakers.first?["open"] as? Bool == true)
                #expect(breakers.first?["threshold"] as? Int == 20)
                let release = "/admin/v1/apps/\(app.appID)/send_breakers/sms/%2B491555"
                let appAdmin = try await gateway.adminToken(.app(app.appID))
                #expect(try await gateway.admin(.delete, release, token: appAdmin).status == .forbidden)
                #expect(try await gateway.requestCode(app, number: pumped + "9999999").status == .tooManyRequests)
                #expect(try await gateway.admin(.delete, release, token: operatorToken).status == .noContent)
                #expect(try await gateway.admin(.delete, release, token: operatorToken).status == .notFound)
                #expect(try await gateway.requestCode(app, number: pumped + "9999998").status == .accepted)
                #expect(try await gateway.auditRows().filter { $0.event == "admin.send_breaker.released" }.count == 1)
            }
        }
    }

    /// `sms_daily_budget` is counted as the other limits are, exactly:
    /// 120 requests at once over two instances, to numbers in 120 prefixes,
    /// with a budget of 30, send 30 messages and refuse the rest with
    /// `send_budget_exhausted`.
    @Test func theDailyBudgetHoldsAcrossTwoInstances() async throws {
        try await FakeHTTPServer.with { base, sms in
            try await withTwoInstances(plugins: .phoneCodeTests) { gateways in
                let app = try await gateways[0].createPhoneApp(
                    webhook: base,
                    rateLimits: [
                        "sms_daily_budget": RateLimitOverride(limit: 30, periodSeconds: 86_400),
                        "code_sends_ip": RateLimitOverride(limit: 1000, periodSeconds: 3600),
                    ], members(["allow_unbound_numbers": true]))
                let statuses = try await statuses(on: gateways, paths: ["/v1/phone_codes"]) { index in
                    ["app_id": app.appID.description, "phone_number": "+44" + String(format: "%04d", index) + "123456"]
                }
                #expect(count(statuses, 202) == 30, "\(statuses)")
                #expect(count(statuses, 429) == Self.attempts - 30)
                #expect(sms.requests.count == 30)
                #expect(try await reasons(in: gateways[0])["send_budget_exhausted"] == Self.attempts - 30)
                let over = try await gateways[1].requestCode(app, number: "+447700900123")
                #expect(over.status == .tooManyRequests && over.headers[.retryAfter] != nil)
                #expect(try jsonObject(over)["error"] as? String == "send_budget_exhausted", "\(text(over))")
            }
        }
    }

    /// The breaker is one count under one row lock whichever instance asks:
    /// 120 requests at once to one prefix over two instances deliver
    /// exactly `minimum_sends`, and trip it once.
    @Test func theBreakerHoldsAcrossTwoInstances() async throws {
        try await FakeHTTPServer.with { base, sms in
            try await withTwoInstances(plugins: .phoneCodeTests) { gateways in
                let app = try await gateways[0].createPhoneApp(
                    webhook: base, rateLimits: ["code_sends_ip": RateLimitOverride(limit: 1000, periodSeconds: 3600)],
                    members(["allow_unbound_numbers": true, "send_protection": ["breaker": ["minimum_sends": 20]]]))
                let statuses = try await statuses(on: gateways, paths: ["/v1/phone_codes"]) { index in
                    ["app_id": app.appID.description, "phone_number": "+4917000" + String(format: "%06d", index)]
                }
                #expect(count(statuses, 202) == 20, "\(statuses)")
                #expect(count(statuses, 429) == Self.attempts - 20)
                #expect(sms.requests.count == 20)
                let rows = try await gateways[0].auditRows()
                #expect(rows.filter { $0.event == "send_breaker.tripped" }.count == 1)
            }
        }
    }

    /// Against a stand-in of Turnstile's siteverify: no token, a token used
    /// twice, one the provider saw before, another site's, another action's
    /// and an expired one each get their documented answer and send
    /// nothing; a good token sends one code. What the provider was asked
    /// carries the app's secret and the token.
    @Test func aHumanCheckRefusesEachBadTokenAndSendsNothingForIt() async throws {
        let turnstile = TurnstileStandIn()
        try await FakeHTTPServer.with(answering: { turnstile.answer($0) }) { verifier, _ in
            try await FakeHTTPServer.with { base, sms in
                try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
                    let app = try await gateway.createPhoneApp(
                        webhook: base, members(["allow_unbound_numbers": true, "send_protection": ["human_check": turnstile.settings(verifier)]]))
                    var next = 0
                    func send(_ token: String?) async throws -> TestResponse {
                        next += 1
                        var body: [String: any Sendable] = [
                            "app_id": app.appID.description, "phone_number": "+4915900000" + String(format: "%03d", next),
                        ]
                        if let token { body["captcha_token"] = token }
                        let request = body
                        return try await gateway.test { try await $0.postJSON(request, to: "/v1/phone_codes") }
                    }
                    func error(_ response: TestResponse) -> String? { (try? jsonObject(response))?["error"] as? String }

                    let missing = try await send(nil)
                    #expect(missing.status == .forbidden && error(missing) == "human_check_required")
                    let good = turnstile.issue()
                    #expect(try await send(good).status == .accepted)
                    #expect(sms.requests.count == 1)
                    let asked = turnstile.asked
                    let replayed = try await send(good)
                    #expect(replayed.status == .forbidden && error(replayed) == "human_check_failed")
                    #expect(turnstile.asked == asked, "a token used here is refused before the provider is asked")
                    let seenByProvider = turnstile.issue()
                    turnstile.spend(seenByProvider)
                    for token in [
                        seenByProvider, turnstile.issue(hostname: "evil.example"), turnstile.issue(action: "login"),
                        turnstile.issue(age: 301), "made-up", String(repeating: "x", count: 4096),
                    ] {
                        let refused = try await send(token)
                        #expect(refused.status == .forbidden && error(refused) == "human_check_failed", "\(text(refused))")
                    }
                    #expect(try await send(String(repeating: "x", count: 4097)).status == .badRequest)
                    #expect(sms.requests.count == 1, "nothing sent for a refused check")
                    let texts = try await gateway.auditRows().filter { $0.event == "phone_code.sent" }.map(\.text)
                    for reason in ["missing", "hostname_mismatch", "action_mismatch", "already_used", "passed"] {
                        #expect(texts.filter { $0.contains(reason) }.count == 1, "\(reason): \(texts)")
                    }
                    #expect(texts.filter { $0.contains("timeout-or-duplicate") }.count == 2, "\(texts)")
                    #expect(texts.filter { $0.contains("invalid-input-response") }.count == 2, "\(texts)")
                    #expect(turnstile.secretsSeen == [TurnstileStandIn.secret])
                    // Neither a token nor the provider's secret is in any row.
                    let rows = try await gateway.auditRows().map(\.text)
                    #expect(!rows.contains { $0.contains(good) || $0.contains(seenByProvider) || $0.contains(TurnstileStandIn.secret) })
                }
            }
        }
    }

    /// One solved check sent with 120 requests at once over two instances
    /// (a replay at the rate a script can make): one code goes out, every
    /// other request is refused, and the provider is asked at most once,
    /// since the token is taken here before the provider is asked.
    @Test func aTokenSendsOneCodeWhateverTheConcurrencyAndTheReplicas() async throws {
        let turnstile = TurnstileStandIn()
        try await FakeHTTPServer.with(answering: { turnstile.answer($0) }) { verifier, _ in
            try await FakeHTTPServer.with { base, sms in
                try await withTwoInstances(plugins: .phoneCodeTests) { gateways in
                    let app = try await gateways[0].createPhoneApp(
                        webhook: base, rateLimits: ["code_sends_ip": RateLimitOverride(limit: 1000, periodSeconds: 3600)],
                        members(["allow_unbound_numbers": true, "send_protection": ["human_check": turnstile.settings(verifier)]]))
                    let token = turnstile.issue()
                    let statuses = try await statuses(on: gateways, paths: ["/v1/phone_codes"]) { index in
                        ["app_id": app.appID.description, "phone_number": "+4915900" + String(format: "%06d", index), "captcha_token": token]
                    }
                    #expect(count(statuses, 202) == 1, "\(statuses)")
                    #expect(count(statuses, 403) == Self.attempts - 1)
                    #expect(sms.requests.count == 1)
                    #expect(turnstile.asked == 1)
                }
            }
        }
    }

    /// A provider that cannot be asked: 503 `human_check_unavailable` and no
    /// send, unless the operator let the app fail open, when the code goes
    /// out and the row says the check was not made.
    @Test func aVerifierThatIsDownFailsClosedUnlessTheAppFailsOpen() async throws {
        try await FakeHTTPServer.with { base, sms in
            try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
                var check = TurnstileStandIn().settings("http://127.0.0.1:9")
                let closed = try await gateway.createPhoneApp(
                    webhook: base, members(["allow_unbound_numbers": true, "send_protection": ["human_check": check]]))
                check["fail_open"] = true
                let open = try await gateway.createPhoneApp(
                    webhook: base, members(["allow_unbound_numbers": true, "send_protection": ["human_check": check]]))
                func send(_ app: AppSettings) async throws -> TestResponse {
                    try await gateway.test {
                        try await $0.postJSON(
                            ["app_id": app.appID.description, "phone_number": "+4915900000999", "captcha_token": "any"],
                            to: "/v1/phone_codes")
                    }
                }
                let refused = try await send(closed)
                #expect(refused.status == .serviceUnavailable)
                #expect(try jsonObject(refused)["error"] as? String == "human_check_unavailable")
                #expect(sms.requests.isEmpty)
                #expect(try await send(open).status == .accepted)
                #expect(sms.requests.count == 1)
                let rows = try await gateway.auditRows().filter { $0.event == "phone_code.sent" }
                #expect(rows.contains { $0.text.contains("unavailable_passed_open") })
            }
        }
    }

    /// `when_risky`: the first sends from an address pass unasked; past
    /// `risky_after_sends` a check is asked, and a good token passes it.
    @Test func aRiskyCheckIsAskedOnlyPastItsCount() async throws {
        let turnstile = TurnstileStandIn()
        try await FakeHTTPServer.with(answering: { turnstile.answer($0) }) { verifier, _ in
            try await FakeHTTPServer.with { base, sms in
                try await TestGateway.with(plugins: .phoneCodeTests) { gateway in
                    var check = turnstile.settings(verifier)
                    check["mode"] = "when_risky"
                    check["risky_after_sends"] = 2
                    let app = try await gateway.createPhoneApp(
                        webhook: base, members(["allow_unbound_numbers": true, "send_protection": ["human_check": check]]))
                    for number in ["+4915900000001", "+4915900000002"] {
                        #expect(try await gateway.requestCode(app, number: number).status == .accepted)
                    }
                    let asked = try await gateway.requestCode(app, number: "+4915900000003")
                    #expect(asked.status == .forbidden && text(asked).contains("human_check_required"))
                    let token = turnstile.issue()
                    let solved = try await gateway.test {
                        try await $0.postJSON(
                            ["app_id": app.appID.description, "phone_number": "+4915900000004", "captcha_token": token],
                            to: "/v1/phone_codes")
                    }
                    #expect(solved.status == .accepted)
                    #expect(sms.requests.count == 3)
                }
            }
        }
    }

    /// The country policy reads the country from the calling code (the
    /// area code for +1): an allow list, a deny list, and the non-geographic
    /// codes pumping favours.
    @Test func theCountryPolicyReadsTheNumbersCountry() async throws {
        try await FakeHTTPServer.with { base, sms in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let germany = try await gateway.createPhoneApp(
                    webhook: base, members(["allow_unbound_numbers": true, "send_protection": ["countries": ["allow": ["DE"]]]]))
                let notJamaica = try await gateway.createPhoneApp(
                    webhook: base, members(["allow_unbound_numbers": true, "send_protection": ["countries": ["deny": ["JM", "001"]]]]))
                for (app, number, status) in [
                    (germany, "+4915112345000", HTTPResponse.Status.accepted), (germany, "+447700900123", .forbidden),
                    (notJamaica, "+12125550123", .accepted), (notJamaica, "+18765550123", .forbidden),
                    (notJamaica, "+882161234567", .forbidden), (notJamaica, "+14165550123", .accepted),
                ] {
                    let response = try await gateway.requestCode(app, number: number)
                    #expect(response.status == status, "\(number): \(text(response))")
                    if status == .forbidden { #expect(try jsonObject(response)["error"] as? String == "phone_number_not_allowed") }
                }
                #expect(sms.requests.count == 3)
            }
        }
    }

    /// Send protection is an operator's to loosen: an app admin's change that
    /// loosens it is 403 naming the setting, one that tightens it is taken.
    @Test func anAppAdminMayTightenSendProtectionButNotLoosenIt() async throws {
        try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
            let check = TurnstileStandIn().settings("https://challenges.cloudflare.com/turnstile/v0/siteverify")
            func options(_ protection: [String: any Sendable]) -> [String: any Sendable] {
                ["plugins": ["phone_code": [
                    "sender": ["type": "webhook", "url": "http://127.0.0.1:9/none", "secret": webhookSecret],
                    "send_protection": protection,
                ]]]
            }
            let stored: [String: any Sendable] = ["human_check": check, "breaker": ["minimum_sends": 30]]
            let app = try await gateway.createPhoneApp(members(["send_protection": stored]))
            let path = "/admin/v1/apps/\(app.appID)"
            let appAdmin = try await gateway.adminToken(.app(app.appID))
            var risky = check
            risky["mode"] = "when_risky"
            for (loosened, named) in [
                (["human_check": risky, "breaker": ["minimum_sends": 30]], "human_check.mode"),
                (["breaker": ["minimum_sends": 30]], "human_check"),
                (["human_check": check, "breaker": false], "breaker"),
                (["human_check": check, "breaker": ["minimum_sends": 31]], "breaker.minimum_sends"),
            ] as [([String: any Sendable], String)] {
                let refused = try await gateway.admin(.patch, path, token: appAdmin, json: options(loosened))
                #expect(refused.status == .forbidden, "\(named): \(text(refused))")
                #expect(text(refused).contains("send_protection.\(named)"), "\(text(refused))")
            }
            var tighter = stored
            tighter["breaker"] = ["minimum_sends": 10]
            let taken = try await gateway.admin(.patch, path, token: appAdmin, json: options(tighter))
            #expect(taken.status == .ok, "\(text(taken))")
            let operatorToken = try await gateway.operatorToken()
            #expect(try await gateway.admin(.patch, path, token: operatorToken, json: options(["breaker": false])).status == .ok)
            // The captcha secret is write-only, as every plugin secret is.
            let read = text(try await gateway.admin(.get, path, token: operatorToken))
            #expect(!read.contains(TurnstileStandIn.secret))
        }
    }
}

/// An app's options written as Swift literals, as the JSON values the app stores.
func members(_ object: [String: any Sendable]) -> [String: JSONValue] { object.mapValues(jsonValue) }

private func jsonValue(_ value: any Sendable) -> JSONValue {
    switch value {
    case let value as JSONValue: value
    case let text as String: .string(text)
    case let flag as Bool: .bool(flag)
    case let number as Int: .number(Double(number))
    case let items as [any Sendable]: .array(items.map(jsonValue))
    case let object as [String: any Sendable]: .object(object.mapValues(jsonValue))
    default: .null
    }
}
