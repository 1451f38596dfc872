import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// Self-service sign-up and verification end to end against PostgreSQL,
/// their mail carried by a real SMTP server (aiosmtpd) and parsed by
/// Python's `email` package; the recovery, password, address and deletion
/// flows are ``SelfServiceAccountTests``.
@Suite struct SelfServiceTests: ConcurrentAttack {
    static let password = "correct horse battery"

    @Test func aSignUpVerifiesItsAddressBeforeItSignsInAndItsTokenSaysSo() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink)
                let signedUp = try await gateway.account(
                    "sign_up", app, ["email": "Grace@Example.com", "password": Self.password, "first_name": "Grace"])
                #expect(signedUp.status == .accepted, "\(text(signedUp))")
                #expect(try jsonObject(signedUp)["expires_in"] as? Int == 900)
                let userID = try #require(try await gateway.userID(ofEmail: "grace@example.com", in: app))
                #expect(UUID(uuidString: userID) != nil, "a generated id: \(userID)")

                // verified_email: the right password is answered 403 until the address is proven.
                let early = try await gateway.passwordSignIn(app, userID, Self.password)
                #expect(early.status == .forbidden && early.error == "email_unverified", "\(early.body)")
                let code = try await sink.code(to: "grace@example.com", subject: "Confirm your Shop address", count: 1)
                let wrong = try await gateway.account("verification/confirm", app, ["email": "grace@example.com", "code": "000000"])
                #expect(wrong.status == .unauthorized)
                let verified = try await gateway.account("verification/confirm", app, ["email": "GRACE@example.com", "code": code])
                #expect(verified.status == .ok, "\(text(verified))")
                #expect(try jsonObject(verified)["user_id"] as? String == userID, "the code's owner learns the id to sign in with")
                #expect(try await gateway.account("verification/confirm", app, ["email": "grace@example.com", "code": code]).status
                    == .unauthorized, "a verification code is single use")

                let signedIn = try await gateway.passwordSignIn(app, userID, Self.password)
                #expect(signedIn.status == .ok, "\(signedIn.body)")
                #expect(signedIn.claims["prn"] as? String == userID)
                let user = try await gateway.admin(.get, "/admin/v1/apps/\(app.appID)/users/\(userID)", token: try await gateway.operatorToken())
                #expect(try jsonObject(user)["email_verified"] as? Bool == true)
                #expect(try jsonObject(user)["first_name"] as? String == "Grace")
                let events = try await gateway.auditRows().map(\.event)
                #expect(events.contains("account.created") && events.contains("account.email_verified"), "\(events)")
            }
        }
    }

    /// Sign-up, a new verification code and recovery, each asked for a
    /// registered and an unregistered address in turn: the status, the body,
    /// the headers (but the request's own id and the limits' running counts)
    /// and the time are the same. The owner of the registered address is
    /// told of the sign-up instead.
    @Test func noRouteTellsARegisteredAddressFromANewOne() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink)
                let token = try await gateway.operatorToken()
                let rounds = 24
                for index in 0..<rounds {
                    let made = try await gateway.admin(
                        .put, "/admin/v1/apps/\(app.appID)/users/known-\(index)", token: token,
                        json: ["password": Self.password, "email": "known-\(index)@example.com"])
                    #expect(made.status == .created)
                }
                for route in ["sign_up", "verification", "password_reset"] {
                    // Each registered address's time beside a new address's, asked one after the other, so a loaded
                    // host slows both; which goes first alternates, so load that falls or rises over the run adds to
                    // one half of the pairs' differences what it takes from the other, and their mean cancels it.
                    var pairs: [(knownFirst: Bool, known: Duration, unknown: Duration)] = []
                    var shapes: [Bool: Set<String>] = [:]
                    for round in 0..<rounds {
                        let knownFirst = round % 2 == 0
                        var times: [Bool: Duration] = [:]
                        for known in knownFirst ? [true, false] : [false, true] {
                            let address = known ? "known-\(round)@example.com" : "\(route)-new-\(round)@example.com"
                            var body: [String: any Sendable] = ["email": address]
                            if route == "sign_up" { body["password"] = Self.password }
                            let sent = body
                            // The mail queued so far is delivered first: a delivery's work (a TLS handshake to the
                            // sink, in this process) falls on whichever request runs beside it, and in a loaded full
                            // run made the request after a registered address's 16 to 26 ms slower.
                            try await gateway.outboxDrained()
                            var answer: TestResponse?
                            times[known] = try await ContinuousClock().measure { answer = try await gateway.account(route, app, sent) }
                            let response = try #require(answer)
                            // The same request again at once: a second answer must not tell them apart either
                            // (a resend delay kept per account once answered a registered address's second 429).
                            let again = try await gateway.account(route, app, sent)
                            shapes[known, default: []].insert(Self.shape(of: response) + " then " + Self.shape(of: again))
                        }
                        // The first rounds warm the statements and the caches; the rest are measured.
                        if round >= 2, let known = times[true], let unknown = times[false] { pairs.append((knownFirst, known, unknown)) }
                    }
                    #expect(shapes[true] == shapes[false], "\(route): \(shapes)")
                    #expect(shapes[true]?.count == 1, "\(route): \(shapes[true] ?? [])")
                    let halves = [true, false].map { first in
                        median(pairs.filter { $0.knownFirst == first }.map { $0.known - $0.unknown }).seconds
                    }
                    let gap = abs(halves[0] + halves[1]) / 2
                    let typical = median(pairs.flatMap { [$0.known, $0.unknown] }).seconds
                    #expect(
                        gap <= max(0.005, 0.2 * typical),
                        "\(route): registered minus new, paired: \(gap) s (\(halves)) of a typical \(typical) s")
                }
                // The registered owners heard of each sign-up with their address (twice each), as did the new
                // addresses' at their second; nobody got a second account. Sign-up sent 24 verifications,
                // recovery 48 codes, and the verification route none (no account there awaits one).
                let messages = try await sink.messages(atLeast: rounds * 6)
                let notices = messages.filter { ($0["subject"] as? String)?.hasPrefix("Someone tried to sign up") == true }
                    .compactMap { ($0["rcpt_tos"] as? [String])?.first }
                #expect(notices.filter { $0.hasPrefix("known-") }.count == rounds * 2, "\(notices)")
                #expect(notices.filter { $0.hasPrefix("sign_up-new-") }.count == rounds, "\(notices)")
                let accounts = try await gateway.client.query(
                    "SELECT count(*)::int FROM password_users WHERE app_id = \(app.appID.uuid) AND email LIKE 'known-%'",
                    logger: TestDatabase.logger)
                for try await count in accounts.decode(Int.self) { #expect(count == rounds) }
            }
        }
    }

    /// A sign-up with an address that has an account, verified or not,
    /// changes nothing of it: the first sign-up's password and sessions stay,
    /// the second's password signs nobody in, and the address hears of it.
    /// (A stranger's sign-up between the owner's and their verification once
    /// gave the owner's account the stranger's password.)
    @Test func aSecondSignUpNeverTakesAnAccountOver() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink, signUp: .open)
                #expect(try await gateway.account("sign_up", app, ["email": "noa@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "noa@example.com", in: app))
                let session = try #require(try await gateway.passwordSignIn(app, userID, Self.password).refreshToken)
                let second = try await gateway.account(
                    "sign_up", app, ["email": "NOA@example.com", "password": "a stranger's password", "first_name": "Mallory"])
                #expect(second.status == .accepted)
                #expect(try await gateway.passwordSignIn(app, userID, "a stranger's password").status == .unauthorized)
                let owner = try await gateway.passwordSignIn(app, userID, Self.password)
                #expect(owner.status == .ok, "\(owner.body)")
                #expect(owner.claims["first_name"] == nil, "the stranger's profile was not written")
                #expect(try await gateway.refresh(app, session).status == .ok, "the owner's session was not ended")
                let messages = try await sink.messages(atLeast: 2)
                #expect(messages.map { $0["subject"] as? String ?? "" }.sorted() == [
                    "Confirm your Shop address: " + (sentCode(in: messages[0]) ?? sentCode(in: messages[1]) ?? "?"),
                    "Someone tried to sign up to Shop with your address",
                ])
                let found = try await gateway.client.query(
                    "SELECT detail ->> 'account' FROM audit_events WHERE event = 'account.sign_up' ORDER BY id",
                    logger: TestDatabase.logger)
                var accounts: [String?] = []
                for try await account in found.decode(String?.self) { accounts.append(account) }
                #expect(accounts == ["created", "exists"])
            }
        }
    }

    /// Status, body and headers, but the request's own id, the date and the limits' running counts.
    static func shape(of response: TestResponse) -> String {
        let headers = response.headers.filter {
            !["x-request-id", "ratelimit", "ratelimit-policy", "date"].contains($0.name.canonicalName)
        }.map { "\($0.name.canonicalName): \($0.value)" }.sorted()
        return "\(response.status.code) \(text(response)) \(headers)"
    }

    /// Sign-ups from many addresses at once over two replicas: the app's
    /// limit and the client's hold exactly, and one address gets one
    /// account however many ask for it at once.
    @Test func signUpFloodsMeetTheirLimitsAndOneAddressGetsOneAccount() async throws {
        try await SMTPSink.with { sink in
            let limits = RateLimitSettings.selfServiceTests([RateLimitPolicy.signUpsPerApp.with(limit: 25, periodSeconds: 86_400)])
            try await withTwoInstances(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: limits) { gateways in
                let app = try await gateways[0].createSelfServiceApp(sink)
                let spread = try await statuses(on: gateways, paths: ["/v1/accounts/sign_up"]) { index in
                    ["app_id": app.appID.uuid.uuidString, "email": "flood-\(index)@example.com", "password": Self.password]
                }
                #expect(spread.filter { $0 == 202 }.count == 25, "\(spread)")
                #expect(spread.allSatisfy { $0 == 202 || $0 == 429 }, "\(spread)")
                let one = try await statuses(on: gateways, paths: ["/v1/accounts/sign_up"]) { index in
                    ["app_id": app.appID.uuid.uuidString, "email": "same@example.com", "password": "password \(index) here"]
                }
                #expect(one.filter { $0 == 202 }.count <= 1, "\(one)")
                let accounts = try await gateways[0].client.query(
                    "SELECT count(*)::int FROM password_users WHERE app_id = \(app.appID.uuid)", logger: TestDatabase.logger)
                for try await count in accounts.decode(Int.self) { #expect(count == 25, "one address made more than one account") }

                // One client (every request of a router test comes from one) against the app's sign_ups_ip.
                let perClient = try await gateways[0].createSelfServiceApp(sink) {
                    $0.rateLimits = [RateLimitPolicy.signUpsPerIP.name: RateLimitOverride(limit: 7, periodSeconds: 3600)]
                }
                let fromOneClient = try await statuses(on: gateways, paths: ["/v1/accounts/sign_up"]) { index in
                    ["app_id": perClient.appID.uuid.uuidString, "email": "client-\(index)@example.com", "password": Self.password]
                }
                #expect(fromOneClient.filter { $0 == 202 }.count == 7, "\(fromOneClient)")
                #expect(fromOneClient.allSatisfy { $0 == 202 || $0 == 429 }, "\(fromOneClient)")
            }
        }
    }

    /// An operator lists the accounts still waiting for their address and
    /// sends one a new code, which replaces the sign-up's; a verified
    /// account, or one whose address an admin typed, gets none.
    @Test func anOperatorSeesUnverifiedAccountsAndSendsThemANewCode() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink)
                let token = try await gateway.operatorToken()
                let users = "/admin/v1/apps/\(app.appID)/users"
                #expect(try await gateway.account("sign_up", app, ["email": "pia@example.com", "password": Self.password]).status == .accepted)
                let userID = try #require(try await gateway.userID(ofEmail: "pia@example.com", in: app))
                #expect(try await gateway.admin(.put, "\(users)/typed", token: token, json: ["password": Self.password, "email": "t@example.com"])
                    .status == .created)
                func listed(_ query: String) async throws -> [String] {
                    let page = try jsonObject(try await gateway.admin(.get, "\(users)?\(query)", token: token))
                    return (page["items"] as? [[String: Any]] ?? []).compactMap { $0["user_id"] as? String }
                }
                #expect(try await listed("email_verified=false") == [userID])
                #expect(try await listed("email_verified=true").isEmpty)
                #expect(try await gateway.admin(.get, "\(users)?email_verified=maybe", token: token).status == .badRequest)

                let first = try await sink.code(to: "pia@example.com", subject: "Confirm your Shop address", count: 1)
                let resent = try await gateway.admin(.post, "\(users)/\(userID)/verification", token: token)
                #expect(resent.status == .accepted, "\(text(resent))")
                let second = try await sink.code(to: "pia@example.com", subject: "Confirm your Shop address", count: 2)
                if first != second {
                    #expect(try await gateway.account("verification/confirm", app, ["email": "pia@example.com", "code": first]).status
                        == .unauthorized, "the sign-up's code died with the new one")
                }
                #expect(try await gateway.account("verification/confirm", app, ["email": "pia@example.com", "code": second]).status == .ok)
                #expect(try await listed("email_verified=true") == [userID])
                for (user, status) in [(userID, 409), ("typed", 409), ("nobody", 404)] {
                    let answer = try await gateway.admin(.post, "\(users)/\(user)/verification", token: token)
                    #expect(answer.status.code == status, "\(user): \(text(answer))")
                }
                let rows = try await gateway.auditRows().filter { $0.event == "admin.account.verification_sent" }
                #expect(rows.count == 1 && rows.first?.userID == userID)
            }
        }
    }

    @Test func anAppWithoutSelfServiceOffersNone() async throws {
        try await SMTPSink.with { sink in
            try await TestGateway.with(plugins: try .emailCodeTests(caFile: sink.caFile), rateLimits: .selfServiceTests()) { gateway in
                let app = try await gateway.createSelfServiceApp(sink) { $0.selfService = nil }
                for route in ["sign_up", "password_reset", "verification", "deletion"] {
                    var body: [String: any Sendable] = ["email": "x@example.com"]
                    if route == "sign_up" { body["password"] = Self.password }
                    if route == "deletion" { body = ["refresh_token": "any"] }
                    let sent = body
                    let answer = try await gateway.account(route, app, sent)
                    let error = try jsonObject(answer)["error"] as? String
                    #expect(answer.status == .forbidden && error == "self_service_off", "\(route)")
                }
                let short = try await gateway.createSelfServiceApp(sink)
                let weak = try await gateway.account("sign_up", short, ["email": "x@example.com", "password": "short"])
                #expect(weak.status == .badRequest)
            }
        }
    }
}

/// The middle of `durations`, sorted.
func median(_ durations: [Duration]) -> Duration {
    let sorted = durations.sorted()
    return sorted.isEmpty ? .zero : sorted[sorted.count / 2]
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
