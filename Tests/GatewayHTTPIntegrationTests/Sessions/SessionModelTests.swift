import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import Testing

/// Random sequences of refreshes, retries, reuse, forgeries, sign-outs,
/// admin revocations and time passing, sent to a gateway over PostgreSQL,
/// each answer checked against a small model of one token family, and the
/// stored session against the model after every step.
@Suite struct SessionModelTests {
    /// What the model knows of the current session.
    struct Family {
        /// Every token the client has held, by generation; the last is the live one.
        var tokens: [String]
        var sessionID: String
        /// The last spending is within the grace window.
        var inGrace = false
        var ended = false

        var generation: Int { tokens.count - 1 }
    }

    enum Step: CaseIterable {
        case refreshLive, retryLast, presentOlder, forge, passGraceWindow, signOut, adminRevoke, signInAgain
    }

    static let grace = 30

    @Test(arguments: 1...6)
    func randomSequencesAgreeWithTheModel(seed: Int) async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSessionApp(SessionSettings(reuseGraceSeconds: Self.grace))
            let adminToken = try await gateway.adminToken(.app(app.appID))
            var random = SplitMix64(seed: UInt64(seed))
            var family = try await Self.signIn(gateway, app)
            var trace: [String] = []
            for _ in 0..<40 {
                let step = Step.allCases.randomElement(using: &random)!
                trace.append("\(step)")
                let context = "seed \(seed): \(trace.joined(separator: ", "))"
                switch step {
                case .refreshLive:
                    let answer = try await gateway.refresh(app, family.tokens.last!)
                    if family.ended {
                        #expect(answer.status == .unauthorized, "\(context)")
                    } else {
                        #expect(answer.status == .ok, "\(context)")
                        family.tokens.append(try #require(answer.refreshToken, "\(context)"))
                        family.inGrace = true
                    }
                case .retryLast:
                    guard family.generation >= 1 else { continue }
                    let answer = try await gateway.refresh(app, family.tokens[family.generation - 1])
                    if family.ended {
                        #expect(answer.status == .unauthorized, "\(context)")
                    } else if family.inGrace {
                        #expect(answer.status == .ok && answer.refreshToken == family.tokens.last, "\(context)")
                    } else {
                        #expect(answer.status == .unauthorized, "\(context)")
                        family.ended = true
                    }
                case .presentOlder:
                    guard family.generation >= 2 else { continue }
                    let older = Int.random(in: 0...(family.generation - 2), using: &random)
                    #expect(try await gateway.refresh(app, family.tokens[older]).status == .unauthorized, "\(context)")
                    family.ended = true
                case .forge:
                    let sessionID = RefreshToken(text: family.tokens.last!)!.sessionID
                    let forged = RefreshToken(
                        sessionID: sessionID, generation: UInt32(family.generation), secret: RefreshToken.first(of: sessionID).secret)
                    #expect(try await gateway.refresh(app, forged.text).status == .unauthorized, "\(context)")
                case .passGraceWindow:
                    try await gateway.age(session: family.sessionID, by: Self.grace + 1)
                    family.inGrace = false
                case .signOut:
                    let token = family.tokens.last!
                    let answer = try await gateway.test {
                        try await $0.postJSON(["app_id": app.appID.uuid.uuidString, "refresh_token": token], to: "/v1/sessions/revoke")
                    }
                    #expect(answer.status == .noContent, "\(context)")
                    family.ended = true
                case .adminRevoke:
                    let answer = try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID)/sessions/\(family.sessionID)", token: adminToken)
                    #expect(answer.status == (family.ended ? .notFound : .noContent), "\(context)")
                    family.ended = true
                case .signInAgain:
                    family = try await Self.signIn(gateway, app)
                }
                let stored = try #require(try await gateway.sessionState(family.sessionID))
                #expect(stored.generation == Int64(family.generation), "\(context)")
                #expect(stored.ended == family.ended, "\(context)")
            }
        }
    }

    static func signIn(_ gateway: TestGateway, _ app: AppSettings) async throws -> Family {
        let answer = try await gateway.signIn(app)
        return Family(tokens: [try #require(answer.refreshToken)], sessionID: try #require(answer.sessionID))
    }
}
