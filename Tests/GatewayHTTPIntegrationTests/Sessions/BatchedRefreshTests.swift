import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// A refresh that answers several challenges at once (`additional_nonces`):
/// one rotation, one row, one count, a token for each nonce, each signed
/// (OpenSSL judges) and carrying its own nonce; a retry within the grace
/// window answers them again; malformed lists and sign-ins asking for more
/// than one token are refused before anything is counted or written.
@Suite struct BatchedRefreshTests: ConcurrentAttack {
    static func refresh(
        _ gateway: TestGateway, _ app: AppSettings, _ token: String?, nonce: String, additional: (any Sendable)?
    ) async throws -> TokenAnswer {
        var body: [String: any Sendable] = [
            "app_id": app.appID.uuid.uuidString, "nonce": nonce,
            "credentials": ["type": "refresh_token", "refresh_token": token ?? ""] as [String: any Sendable],
        ]
        body["additional_nonces"] = additional
        let sent = body
        return try TokenAnswer(try await gateway.test { try await $0.postJSON(sent) })
    }

    static func claims(_ token: String) throws -> [String: Any] {
        let payload = try #require(token.split(separator: ".").dropFirst().first.flatMap { Base64URL.decode($0) })
        return try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
    }

    static func signatureHolds(_ token: String) async throws -> Bool {
        let parts = token.split(separator: ".")
        let signature = try #require(Base64URL.decode(parts[2]))
        return try await OpenSSL.verifiesRS256(
            message: Data("\(parts[0]).\(parts[1])".utf8), signature: signature, publicKeyPEM: TestKeys.shared.publicKeyPEM)
    }

    @Test func oneRefreshAnswersEveryNonceItCarries() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSessionApp(SessionSettings(reuseGraceSeconds: 30))
            let signedIn = try await gateway.signIn(app)
            let nonces = (1...5).map { "challenge-\($0)-\(UUID())" }
            let answer = try await Self.refresh(gateway, app, signedIn.refreshToken, nonce: nonces[0], additional: Array(nonces.dropFirst()))
            #expect(answer.status == .ok, "\(answer.body)")
            let more = try #require(answer.body["additional_identity_tokens"] as? [String])
            #expect(more.count == 4)
            let tokens = [try #require(answer.token)] + more
            for (token, nonce) in zip(tokens, nonces) {
                let claims = try Self.claims(token)
                #expect(claims["nce"] as? String == nonce)
                #expect(claims["prn"] as? String == "alice")
                #expect(try await Self.signatureHolds(token))
            }
            // One rotation, one row saying how many more, one count of the app's policy.
            let rows = try await gateway.auditRowsOnceWritten(requestID: answer.requestID, event: "token.issued")
            #expect(rows.count == 1 && rows[0].text.contains("additional_tokens"))
            #expect(try await gateway.sessionState(try #require(signedIn.sessionID))?.generation == 1)

            // The answer lost: a retry of the spent token within the grace window is answered alike, for its own nonces.
            let retried = try await Self.refresh(gateway, app, signedIn.refreshToken, nonce: "again-1", additional: ["again-2"])
            #expect(retried.status == .ok && retried.refreshToken == answer.refreshToken)
            let again = try #require(retried.body["additional_identity_tokens"] as? [String])
            #expect(try Self.claims(again[0])["nce"] as? String == "again-2")

            // No list, an empty list and null answer one token, with no member for more.
            for additional in [nil, [String](), NSNull()] as [(any Sendable)?] {
                let single = try await Self.refresh(gateway, app, answer.refreshToken, nonce: "n-\(UUID())", additional: additional)
                #expect(single.status == .ok && single.body["additional_identity_tokens"] == nil, "\(single.body)")
            }
        }
    }

    /// One live token, batched refreshes with it sent at once over two
    /// instances: it is spent once. Every answer within the grace window is
    /// the same successor, the session moves one generation, and each
    /// answer's tokens carry that request's own nonces.
    @Test func aBatchedRefreshSpendsItsTokenOnceAcrossTwoInstances() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createSessionApp(SessionSettings(reuseGraceSeconds: 60))
            let signedIn = try await gateways[0].signIn(app)
            let token = try #require(signedIn.refreshToken)
            // Each answer as (its status, its refresh token, the nonces its tokens carry, in order).
            typealias Seen = (status: Int, successor: String?, nonces: [String?])
            let answers = try await withThrowingTaskGroup(of: (Int, Seen).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let answer = try await Self.refresh(
                            gateways[index % 2], app, token, nonce: "r\(index)-a", additional: ["r\(index)-b", "r\(index)-c"])
                        let tokens = answer.token.map { [$0] + (answer.body["additional_identity_tokens"] as? [String] ?? []) } ?? []
                        let nonces = try tokens.map { try Self.claims($0)["nce"] as? String }
                        return (index, (Int(answer.status.code), answer.refreshToken, nonces))
                    }
                }
                return try await group.reduce(into: [Int: Seen]()) { $0[$1.0] = $1.1 }
            }
            #expect(answers.values.allSatisfy { $0.status == 200 }, "\(answers.values.map(\.status))")
            #expect(Set(answers.values.compactMap(\.successor)).count == 1, "one successor")
            for (index, seen) in answers {
                #expect(seen.nonces == ["r\(index)-a", "r\(index)-b", "r\(index)-c"])
            }
            #expect(try await gateways[0].sessionState(try #require(signedIn.sessionID))?.generation == 1)
            #expect(try await gateways[0].auditRows().filter { $0.event == "session.reuse_detected" }.isEmpty)
        }
    }

    @Test func malformedListsAndSignInsAskingForMoreAreRefusedAsTheirRequests() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createSessionApp()
            let signedIn = try await gateway.signIn(app)
            let tooMany = (0...TokenRequest.maximumAdditionalNonces).map { "n\($0)" }
            let refused: [((any Sendable)?, String)] = [
                (tooMany, "at most 63"), (["ok", "with space"], "additional_nonces: nonce contains a space"),
                (["ok", ""], "additional_nonces: nonce is required"), (["ok", 7] as [any Sendable], "must be an array of strings"),
                ("n2", "must be an array of strings"), (["nested": "n"] as [String: any Sendable], "must be an array of strings"),
            ]
            for (additional, message) in refused {
                let answer = try await Self.refresh(gateway, app, signedIn.refreshToken, nonce: "n1", additional: additional)
                #expect(answer.status == .badRequest, "\(additional as Any): \(answer.body)")
                #expect((answer.body["message"] as? String)?.contains(message) == true, "\(answer.body)")
            }
            // The most a refresh may carry is answered.
            let most = Array(tooMany.dropLast())
            let answered = try await Self.refresh(gateway, app, signedIn.refreshToken, nonce: "n1", additional: most)
            #expect((answered.body["additional_identity_tokens"] as? [String])?.count == TokenRequest.maximumAdditionalNonces)

            // A sign-in answers one nonce.
            var body = aliceRequest(app, nonce: "n1")
            body["additional_nonces"] = ["n2"]
            let sent = body
            let signIn = try TokenAnswer(try await gateway.test { try await $0.postJSON(sent) })
            #expect(signIn.status == .badRequest && (signIn.body["message"] as? String)?.contains("for refreshes") == true)
            #expect(try await gateway.reason(of: signIn) == "invalid_request")
        }
    }
}
