import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

@testable import EmailCodePlugin

/// Whether a self-service route's answer tells a registered address from a
/// new one, by its time among the rest. A timing comparison of a few
/// milliseconds, so under `./scripts/test` it runs alone, after the
/// parallel run (``SuiteEnvironment/timingTestsDeferred``).
@Suite(.enabled(if: !SuiteEnvironment.timingTestsDeferred, Comment(rawValue: SuiteEnvironment.timingTestsDeferredReason)))
struct SelfServiceTimingTests {
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
                        json: ["password": SelfServiceTests.password, "email": "known-\(index)@example.com"])
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
                            if route == "sign_up" { body["password"] = SelfServiceTests.password }
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

    /// Status, body and headers, but the request's own id, the date and the limits' running counts.
    static func shape(of response: TestResponse) -> String {
        let headers = response.headers.filter {
            !["x-request-id", "ratelimit", "ratelimit-policy", "date"].contains($0.name.canonicalName)
        }.map { "\($0.name.canonicalName): \($0.value)" }.sorted()
        return "\(response.status.code) \(text(response)) \(headers)"
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
