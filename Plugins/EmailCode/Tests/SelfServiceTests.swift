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
