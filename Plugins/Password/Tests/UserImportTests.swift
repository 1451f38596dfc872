import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
@testable import PasswordPlugin
import Testing

/// `POST /admin/v1/apps/{app_id}/users:import`: NDJSON in, per-line errors and a summary out.
@Suite struct UserImportTests {
    static let hash = "$argon2id$v=19$m=4096,t=3,p=1$c29tZXNhbHQ$qLml5cbqFAO6YxVHhrSBHP0UWdxrIxkNcM8aMX3blzU"

    func importUsers(_ gateway: some GatewayUnderTest, _ app: AppSettings, token: String, body: String, contentType: String = "application/x-ndjson")
        async throws -> TestResponse
    {
        try await gateway.test(over: .router) { client in
            try await client.execute(
                uri: "/admin/v1/apps/\(app.appID)/users:import", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: contentType], body: ByteBuffer(string: body))
        }
    }

    func userCount(_ gateway: some GatewayUnderTest, _ app: AppSettings) async throws -> Int {
        try await gateway.pluginServices.passwordUsers.list(in: app.appID, prefix: "", emailVerified: nil, after: nil, limit: 1_000_000).count
    }

    @Test func tenThousandLinesWithSomeBadOnesStoreTheRestAndReportEachBadLine() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let bad: [Int: String] = [
                10: "this is not json",
                100: #"{"password_hash": "\#(Self.hash)"}"#,
                1000: #"{"user_id": "u1000", "password": "short"}"#,
                2000: #"{"user_id": "u2000", "user_id": "x2000", "password_hash": "\#(Self.hash)"}"#,
                3000: #"{"user_id": "u3000", "password_hash": "\#(Self.hash)", "display_name": "a\u0000b"}"#,
                4000: #"{"user_id": "u\u001b[31m4000", "password_hash": "\#(Self.hash)"}"#,
                5000: #"{"user_id": "u5000", "password_hash": "plain-text-is-not-a-hash"}"#,
                7000: #"{"user_id": "u7000", "password_hash": "\#(Self.hash)", "role": "admin"}"#,
                9000: #"{"user_id": "u9000", "password_hash": "\#(Self.hash)", "filler": "\#(String(repeating: "x", count: 20_000))"}"#,
                9999: #"{"user_id": "u9999"}"#,
            ]
            var lines: [String] = []
            for line in 1...10_000 {
                if let text = bad[line] {
                    lines.append(text)
                } else if line % 2500 == 1 {
                    lines.append(#"{"user_id": "u\#(line)", "password": "plain password \#(line)", "first_name": "P\#(line)"}"#)
                } else {
                    lines.append(#"{"user_id": "u\#(line)", "password_hash": "\#(Self.hash)", "display_name": "User \#(line)"}"#)
                }
            }
            let response = try await importUsers(gateway, app, token: token, body: lines.joined(separator: "\n") + "\n\n")
            #expect(response.status == .ok)
            let summary = try jsonObject(response)
            #expect(summary["lines"] as? Int == 10_000)
            #expect(summary["created"] as? Int == 10_000 - bad.count)
            #expect(summary["replaced"] as? Int == 0)
            #expect(summary["failed"] as? Int == bad.count)
            let errors = try #require(summary["errors"] as? [[String: Any]])
            #expect(errors.compactMap { $0["line"] as? Int } == bad.keys.sorted())
            #expect(errors.allSatisfy { $0["error"] as? String == "invalid_request" })
            let messages = Dictionary(uniqueKeysWithValues: errors.map { ($0["line"] as? Int ?? 0, $0["message"] as? String ?? "") })
            #expect(messages[10] == "The line is not a JSON object.")
            #expect(messages[2000] == "The line names a member twice.")
            #expect(messages[3000] == "display_name must not contain the NUL character (\\u0000).")
            #expect(messages[4000] == "user_id must not contain control characters.")
            #expect(!text(response).contains("short"))
            #expect(try await userCount(gateway, app) == 10_000 - bad.count)

            let plain = try await gateway.test {
                try await $0.postJSON(passwordRequest(app, user: "u2501", password: "plain password 2501"))
            }
            #expect(plain.status == .ok)
            let imported = try await gateway.test { try await $0.postJSON(passwordRequest(app, user: "u2", password: "password")) }
            #expect(imported.status == .ok)

            let batches = try await gateway.auditRows().filter { $0.event == "admin.users.imported" }
            #expect(batches.count == 20)
            for batch in batches { #expect(!batch.text.contains("plain password") && !batch.text.contains("$argon2")) }
        }
    }

    @Test func reimportingReplacesAndARepeatedUserIDKeepsTheLastLine() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.operator)
            let body = """
                {"user_id": "a", "password_hash": "\(Self.hash)", "first_name": "First"}
                {"user_id": "a", "password_hash": "\(Self.hash)", "first_name": "Second"}
                {"user_id": "b", "password_hash": "\(Self.hash)", "disabled": true}
                """
            let first = try jsonObject(try await importUsers(gateway, app, token: token, body: body))
            #expect(first["created"] as? Int == 2)
            #expect(first["replaced"] as? Int == 1)
            let again = try jsonObject(try await importUsers(gateway, app, token: token, body: body))
            #expect(again["created"] as? Int == 0)
            #expect(again["replaced"] as? Int == 3)
            let read = try jsonObject(try await gateway.admin(.get, TestGateway.userPath("a", in: app), token: token))
            #expect(read["first_name"] as? String == "Second")
            let disabled = try jsonObject(try await gateway.admin(.get, TestGateway.userPath("b", in: app), token: token))
            #expect(disabled["disabled"] as? Bool == true)
        }
    }

    @Test func theImportNeedsNDJSONAndAnAuthorizedApp() async throws {
        try await MemoryGateway.with(plugins: .passwordTests) { gateway in
            let app = try await gateway.createPasswordApp()
            let other = try await gateway.createPasswordApp()
            let token = try await gateway.adminToken(.app(other.appID))
            let operatorToken = try await gateway.adminToken(.operator)
            let line = #"{"user_id": "a", "password_hash": "\#(Self.hash)"}"#
            let json = try await importUsers(gateway, app, token: operatorToken, body: line, contentType: "application/json")
            #expect(json.status == .unsupportedMediaType)
            let foreign = try await importUsers(gateway, app, token: token, body: line)
            #expect(foreign.status == .notFound)
            #expect(try await userCount(gateway, app) == 0)
        }
    }
}
