import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Every token request leaves exactly one audit row, and no row holds a secret.
@Suite struct TokenAuditTests {
    @Test func oneRowPerRequestIssuedOrDeniedWithoutSecrets() async throws {
        try await MemoryGateway.with { gateway in
            let app = try await gateway.createApp()
            var wrongPassword = aliceRequest(app)
            wrongPassword["credentials"] = ["type": "static", "password": "not-wonderland"]
            var unknownUser = aliceRequest(app)
            unknownUser["user_id"] = "mallory"
            let requests: [[String: any Sendable]] = [
                aliceRequest(app), wrongPassword, unknownUser, ["app_id": "garbage", "nonce": "n"],
            ]

            var responses: [TestResponse] = []
            for request in requests {
                responses.append(try await gateway.test { try await $0.postJSON(request) })
            }
            responses.append(try await gateway.test { try await $0.post(contentType: "text/plain", body: "x") })

            let rows = try await gateway.auditRows()
            #expect(rows.count == responses.count)
            #expect(rows.map(\.requestID) == responses.map { $0.headers[HTTPField.Name("x-request-id")!]! })
            #expect(rows.map(\.event) == ["token.issued", "token.denied", "token.denied", "token.denied", "token.denied"])
            #expect(rows.map(\.reason) == [nil, "bad_password", "unknown_user", "invalid_request", "unsupported_media_type"])
            #expect(rows.map(\.userID) == ["alice", "alice", "mallory", nil, nil])

            let token = try #require(identityToken(in: responses[0]))
            for row in rows {
                for secret in ["wonderland", "not-wonderland", token, String(token.split(separator: ".")[2])] {
                    #expect(!row.text.contains(secret))
                }
            }
        }
    }
}
