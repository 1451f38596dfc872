import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

/// The session changes the request ledger's statement makes
/// (`SessionChangesSQL`) and ``MemorySessions`` (what the in-memory gateway
/// of the HTTP tests keeps) are held to one sequence of changes: after each,
/// the same sessions, with the same generation, tokens, and end.
@Suite struct SessionChangeAgreementTests {
    static let timeout = Duration.seconds(60)

    /// What both sides must agree on of a session (times are each clock's own).
    struct Seen: Equatable, CustomStringConvertible {
        let sessionID: UUID
        let userID: String
        let methods: [String]
        let deviceLabel: String?
        let generation: UInt32
        let tokenDigest: [UInt8]
        let previousDigest: [UInt8]?
        let revokedReason: String?

        init(_ session: StoredSession) {
            sessionID = session.sessionID
            userID = session.userID
            methods = session.methods
            deviceLabel = session.deviceLabel
            generation = session.generation
            tokenDigest = session.tokenDigest
            previousDigest = session.previousDigest
            revokedReason = session.revokedReason
        }

        var description: String { "\(userID)/\(sessionID.uuidString.prefix(4)) g\(generation) \(revokedReason ?? "live")" }
    }

    @Test(arguments: 1...4)
    func randomChangesLeaveTheSameSessionsInSQLAsInMemory(seed: Int) async throws {
        try await TestDatabase.with { client, _ in
            let app = AppSettings(
                appID: AppID(uuid: UUID()), name: "agreement", environment: .development, providerID: ProviderID(uuid: UUID()),
                credentialTypes: ["static"])
            try await AppRepository(client: client, logger: TestDatabase.logger).insert(app)
            let ledger = PostgresRequestLedger(client: client, logger: TestDatabase.logger, timeout: Self.timeout)
            let store = PostgresSessions(client: client, logger: TestDatabase.logger, retry: .once(within: Self.timeout))
            var memory = MemorySessions()
            var random = SplitMix64(seed: UInt64(seed))
            var live: [UUID: RefreshToken] = [:]
            var spent: [UUID: RefreshToken] = [:]
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await ledger.run() }
                for step in 0..<60 {
                    let users = ["ada", "bob"]
                    let change: SessionChange
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<4 where !live.isEmpty || step > 0:
                        // Rotate a session: mostly with its live token, sometimes with a spent or made-up one.
                        let sessionID = Array(live.keys).randomElement(using: &random) ?? UUID()
                        let token: RefreshToken
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0: token = spent[sessionID] ?? RefreshToken.first(of: sessionID)
                        case 1: token = RefreshToken.first(of: sessionID)
                        default: token = live[sessionID] ?? RefreshToken.first(of: sessionID)
                        }
                        let successor = RefreshToken.first(of: sessionID)
                        change = .rotate(
                            SessionRotation(
                                appID: app.appID, sessionID: sessionID, generation: token.generation, tokenDigest: token.digest,
                                successorDigest: successor.digest, idleTimeoutSeconds: 3600))
                        if memory.find(sessionID, in: app.appID)?.tokenDigest == token.digest {
                            spent[sessionID] = token
                            live[sessionID] = RefreshToken(
                                sessionID: sessionID, generation: token.generation + 1, secret: successor.secret)
                        }
                    case 4..<6 where !live.isEmpty:
                        change = .revoke(appID: app.appID, sessionID: Array(live.keys).randomElement(using: &random)!, reason: "reuse_detected")
                    default:
                        let token = RefreshToken.first(of: UUID())
                        live[token.sessionID] = token
                        change = .start(
                            SessionStart(
                                appID: app.appID, sessionID: token.sessionID, userID: users.randomElement(using: &random)!,
                                profile: UserProfile([.displayName: "Ada"]), credentialType: "static",
                                methods: Bool.random(using: &random) ? ["pwd"] : [], deviceLabel: Bool.random(using: &random) ? "phone" : nil,
                                tokenDigest: token.digest, idleTimeoutSeconds: 3600, lifetimeSeconds: 86_400, maximumPerUser: 3))
                    }
                    let row = AuditEvent(appID: app.appID, event: "test.session", outcome: .success, requestID: "step-\(step)")
                    let admission = try await ledger.countAndRecord([], ifAllowed: row, changing: change)
                    let madeInMemory = memory.apply(change, at: Date())
                    if case .start = change {} else {
                        #expect(admission.sessionChanged == madeInMemory, "seed \(seed), step \(step): \(change)")
                    }
                    for user in users {
                        let inSQL = try await store.list(of: user, in: app.appID, includingEnded: true, at: Date())
                            .map(Seen.init).sorted { $0.sessionID.uuidString < $1.sessionID.uuidString }
                        let inMemory = memory.list(of: user, in: app.appID, includingEnded: true, at: Date())
                            .map(Seen.init).sorted { $0.sessionID.uuidString < $1.sessionID.uuidString }
                        #expect(inSQL == inMemory, "seed \(seed), step \(step), \(user)")
                    }
                }
                group.cancelAll()
            }
        }
    }
}
