import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// Single use across replicas: a code, a ticket and the failure limit,
/// attacked with requests at once on two gateway instances over one
/// database, counting what got through.
@Suite struct SecondFactorRaceTests: ConcurrentAttack {
    static let rounds = 6
    static let senders = 6

    /// Sends `send(gateway, sender)` for `senders` senders at once, alternating instances; the status codes.
    private func atOnce(
        _ gateways: [TestGateway], _ senders: Int, _ send: @escaping @Sendable (TestGateway, Int) async throws -> TokenAnswer
    ) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for sender in 0..<senders {
                let gateway = gateways[sender % gateways.count]
                group.addTask { Int(try await send(gateway, sender).status.code) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// One ticket and one code sent six times at once, three on each
    /// instance, round after round (a new user each): one token a round.
    @Test func theSameCodeAndTicketOnTwoInstancesAtOnceGiveOneToken() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSecondFactorApp()
            var tokens = 0
            for round in 0..<Self.rounds {
                let enrolled = try await gateways[0].enrolledUser(app, "same-ticket-\(round)")
                let ticket = try #require(try await gateways[1].firstFactor(app, user: "same-ticket-\(round)").ticket)
                let code = enrolled.nextCode
                let answers = try await atOnce(gateways, Self.senders) { gateway, _ in
                    try await gateway.secondStep(app, ticket: ticket, code: code)
                }
                let issued = answers.filter { $0 == 200 }.count
                #expect(issued == 1, "round \(round): \(answers)")
                #expect(answers.allSatisfy { $0 == 200 || $0 == 401 })
                tokens += issued
            }
            #expect(tokens == Self.rounds)
        }
    }

    /// One code (a shoulder-surfed one) sent with two tickets of two
    /// sign-ins at once, on two instances: the step is taken once.
    @Test func theSameCodeWithTwoTicketsOnTwoInstancesAtOnceGivesOneToken() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSecondFactorApp()
            var tokens = 0
            for round in 0..<Self.rounds {
                let user = "two-tickets-\(round)"
                let enrolled = try await gateways[0].enrolledUser(app, user)
                var tickets: [String] = []
                for sender in 0..<Self.senders {
                    let ticket = try await gateways[sender % 2].firstFactor(app, user: user, nonce: "n-\(sender)").ticket
                    tickets.append(try #require(ticket))
                }
                let code = enrolled.nextCode
                let sent = tickets
                let answers = try await atOnce(gateways, Self.senders) { gateway, sender in
                    try await gateway.secondStep(app, ticket: sent[sender], code: code, nonce: "n-\(sender)")
                }
                let issued = answers.filter { $0 == 200 }.count
                #expect(issued == 1, "round \(round): \(answers)")
                tokens += issued
            }
            #expect(tokens == Self.rounds)
        }
    }

    /// One recovery code sent with six tickets of six sign-ins at once, on
    /// two instances, round after round (a new user each): one token a round.
    @Test func oneRecoveryCodeWithSixTicketsOnTwoInstancesAtOnceGivesOneToken() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSecondFactorApp()
            var tokens = 0
            for round in 0..<Self.rounds {
                let user = "recovery-\(round)"
                let code = try #require(try await gateways[0].enrolledUser(app, user).recoveryCodes.first)
                var tickets: [String] = []
                for sender in 0..<Self.senders {
                    tickets.append(try #require(try await gateways[sender % 2].firstFactor(app, user: user, nonce: "n-\(sender)").ticket))
                }
                let sent = tickets
                let answers = try await atOnce(gateways, Self.senders) { gateway, sender in
                    try await gateway.secondStep(app, ticket: sent[sender], code: code, type: "recovery_code", nonce: "n-\(sender)")
                }
                let issued = answers.filter { $0 == 200 }.count
                #expect(issued == 1, "round \(round): \(answers)")
                #expect(answers.allSatisfy { $0 == 200 || $0 == 401 })
                tokens += issued
            }
            #expect(tokens == Self.rounds)
        }
    }

    /// Guessing codes in parallel against `mfa_failures` (5 an hour here):
    /// 120 wrong codes at once over two instances; at most 5 reach the
    /// check, every other is 429, and then the right code is refused too.
    @Test func guessingInParallelReachesTheCheckNoMoreThanTheLimit() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSecondFactorApp {
                $0.rateLimits["mfa_failures"] = RateLimitOverride(limit: 5, periodSeconds: 3600)
            }
            let authenticator = try await gateways[0].enrolledUser(app, "guessed").authenticator
            let ticket = try #require(try await gateways[0].firstFactor(app, user: "guessed").ticket)
            let shown = Set(try await authenticator.codes().values)
            let guesses = (0..<Self.attempts).map { index in
                var guess = String(format: "%06d", (index * 7919 + 13) % 1_000_000)
                while shown.contains(guess) { guess = String(format: "%06d", (Int(guess)! + 1) % 1_000_000) }
                return guess
            }
            let appID = app.appID.uuid.uuidString
            let statuses = try await statuses(on: gateways) { index in
                [
                    "app_id": appID, "nonce": "nonce-1",
                    "credentials": ["type": "totp", "mfa_ticket": ticket, "code": guesses[index]] as [String: any Sendable],
                ]
            }
            let checked = statuses.filter { $0 == 401 }.count
            #expect(checked <= 5 && checked >= 1, "\(checked) guesses reached the check")
            #expect(statuses.filter { $0 == 429 }.count == Self.attempts - checked, "\(Set(statuses))")
            let rows = try await gateways[0].auditRows().filter { $0.reason == "mfa_code_invalid" }
            #expect(rows.count == checked, "every checked guess has its row")
            let right = try await gateways[1].secondStep(app, ticket: ticket, code: try await authenticator.code())
            #expect(right.status == .tooManyRequests, "the user is over the limit: \(right.body)")
        }
    }
}
