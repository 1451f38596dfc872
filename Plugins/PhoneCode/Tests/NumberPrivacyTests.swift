import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// Whether a number has an account must not show in any answer: a bound
/// and an unbound number put through the same requests get the same
/// statuses, bodies and headers, and take as long as a delivery.
@Suite struct NumberPrivacyTests {
    /// What a client can do to one number.
    enum Step: CaseIterable, CustomStringConvertible {
        /// `POST /v1/phone_codes`.
        case requestCode
        /// The resend delay passes (the number's code is made older in the table).
        case waitOutResendDelay
        /// A sign-in with a code that is not the number's.
        case signInWithAWrongCode

        var description: String {
            switch self {
            case .requestCode: "request"
            case .waitOutResendDelay: "wait"
            case .signInWithAWrongCode: "wrong-code"
            }
        }
    }

    /// Everything a client sees of an answer but what differs on every request (its id, the date), with
    /// the seconds of `Retry-After` and `RateLimit`'s `t` apart: they count down with the clock, so two
    /// numbers' answers may differ by the time that passed between their steps.
    struct Seen: CustomStringConvertible {
        let status: Int
        let body: String
        let headers: [String]
        let seconds: [Int]

        init(_ response: TestResponse) {
            status = Int(response.status.code)
            let skipped: Set<String> = ["date", "x-request-id", "retry-after", "content-length"]
            var headers: [String] = []
            var seconds: [Int] = []
            for field in response.headers where !skipped.contains(field.name.canonicalName) {
                if field.name.canonicalName == "ratelimit", let range = field.value.range(of: ";t=") {
                    headers.append("ratelimit: " + field.value[..<range.lowerBound])
                    seconds.append(Int(field.value[range.upperBound...]) ?? -1)
                } else {
                    headers.append("\(field.name.canonicalName): \(field.value)")
                }
            }
            if let retryAfter = response.headers[.retryAfter] { seconds.append(Int(retryAfter) ?? -1) }
            self.headers = headers.sorted()
            self.seconds = seconds
            // The body less its request id; its message may quote a wait in seconds too.
            var object = (try? JSONSerialization.jsonObject(with: Data(text(response).utf8))) as? [String: Any] ?? [:]
            object["request_id"] = nil
            let json = (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)) ?? Data()
            body = String(String(decoding: json, as: UTF8.self).map { $0.isNumber ? "#" : $0 })
        }

        /// The same answer, its waits within `tolerance` seconds of each other.
        func matches(_ other: Seen, tolerance: Int) -> Bool {
            status == other.status && body == other.body && headers == other.headers
                && seconds.count == other.seconds.count && zip(seconds, other.seconds).allSatisfy { abs($0 - $1) <= tolerance }
        }

        var description: String { "\(status) \(headers) \(seconds) \(body)" }
    }

    @Test func boundAndUnboundNumbersGetTheSameAnswersWhateverTheRequests() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                // Per-client limits are shared by both numbers of a pair, so they are made roomy enough never to
                // be the limit a RateLimit header reports; the send limit per number is tight enough to reach.
                let app = try await gateway.createPhoneApp(
                    webhook: base,
                    rateLimits: [
                        "code_sends_ip": RateLimitOverride(limit: 100_000, periodSeconds: 3600),
                        "code_sends_number": RateLimitOverride(limit: 3, periodSeconds: 3600),
                        "phone_failures": RateLimitOverride(limit: 4, periodSeconds: 900),
                    ])
                let token = try await gateway.adminToken(.operator)
                let seed = UInt64.random(in: 0...UInt64.max)
                var random = SplitMix64(seed: seed)
                for round in 0..<10 {
                    let steps = (0..<Int.random(in: 4...10, using: &random)).map { _ in
                        Step.allCases.randomElement(using: &random)!
                    }
                    let bound = "+4917\(String(format: "%08d", 10_000_000 + round))"
                    let unbound = "+4917\(String(format: "%08d", 20_000_000 + round))"
                    let binding = try await gateway.admin(
                        .put, "/admin/v1/apps/\(app.appID)/phone_numbers/\(bound.replacingOccurrences(of: "+", with: "%2B"))",
                        token: token, json: ["user_id": "user-\(round)"])
                    #expect(binding.status == .created)
                    let started = ContinuousClock.now
                    for (index, step) in steps.enumerated() {
                        // Each step for both numbers in turn; waits they are told may differ by the time the round
                        // has taken so far (rounded up, plus one for the second boundaries).
                        let seenBound = try await Self.take(step, number: bound, app: app, gateway: gateway)
                        let seenUnbound = try await Self.take(step, number: unbound, app: app, gateway: gateway)
                        let tolerance = Int((ContinuousClock.now - started).components.seconds) + 2
                        let same: Bool =
                            switch (seenBound, seenUnbound) {
                            case (nil, nil): true
                            case (let a?, let b?): a.matches(b, tolerance: tolerance)
                            default: false
                            }
                        #expect(
                            same,
                            "seed \(seed), round \(round), step \(index + 1) of \(steps): bound \(seenBound), unbound \(seenUnbound)")
                    }
                }
                // Only bound numbers were texted; the unbound ones' codes were stored and never sent.
                #expect(webhook.requests.allSatisfy { ($0.json["phone_number"] as? String)?.hasPrefix("+49171") == true })
            }
        }
    }

    /// Takes `step` for `number`; nil for a step that asks the gateway nothing.
    private static func take(_ step: Step, number: String, app: AppSettings, gateway: some GatewayUnderTest) async throws -> Seen? {
        switch step {
        case .requestCode:
            return Seen(try await gateway.requestCode(app, number: number))
        case .waitOutResendDelay:
            try await gateway.backdateCodes(by: 120, of: number)
            return nil
        case .signInWithAWrongCode:
            return Seen(try await gateway.signIn(app, number: number, code: "000000"))
        }
    }

    /// Many simultaneous requests for one number, spread over two instances on one database: a bound and an
    /// unbound number get the same count of each status (one code, the rest told to wait).
    @Test func parallelRequestsOverTwoReplicasAnswerBoundAndUnboundNumbersAlike() async throws {
        try await FakeHTTPServer.with { base, webhook in
            try await TestGateway.with(plugins: .phoneCodeTests) { first in
                try await first.withReplica { second in
                    let app = try await first.createPhoneApp(
                        webhook: base, rateLimits: ["code_sends_ip": RateLimitOverride(limit: 100_000, periodSeconds: 3600)])
                    var tallies: [[Int: Int]] = []
                    for number in [ada, "+4915199999999"] {
                        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                            for index in 0..<100 {
                                let gateway = index % 2 == 0 ? first : second
                                group.addTask { Int(try await gateway.requestCode(app, number: number).status.code) }
                            }
                            return try await group.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
                        }
                        tallies.append(statuses)
                    }
                    #expect(tallies[0] == [202: 1, 429: 99])
                    #expect(tallies[1] == tallies[0])
                    #expect(webhook.requests.count == 1)
                }
            }
        }
    }

    /// An unbound number's answer waits as long as the app's deliveries take, so its timing does not tell it
    /// apart. (A lower bound only: a sleep is never shorter than asked, however loaded the machine.)
    @Test func anUnboundNumberIsAnsweredNoSoonerThanADeliveryTakes() async throws {
        let latency = Duration.milliseconds(300)
        try await FakeHTTPServer.with(latency: latency) { base, webhook in
            try await MemoryGateway.with(plugins: .phoneCodeTests) { gateway in
                let app = try await gateway.createPhoneApp(webhook: base)
                #expect(try await gateway.requestCode(app).status == .accepted)
                #expect(webhook.requests.count == 1)
                for index in 0..<3 {
                    let started = ContinuousClock.now
                    let unbound = try await gateway.requestCode(app, number: "+49151000000\(index)")
                    #expect(unbound.status == .accepted)
                    #expect(ContinuousClock.now - started >= latency, "answered before a delivery could have been")
                }
                #expect(webhook.requests.count == 1)
            }
        }
    }
}
