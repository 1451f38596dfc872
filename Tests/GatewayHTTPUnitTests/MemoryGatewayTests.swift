import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import Testing

/// The routes' promises, with the stores in memory: what the HTTP layer
/// decides, answers and records, without a database.
@Suite struct MemoryGatewayTests {
    @Test func aTokenIsAnsweredWithItsRowAndTheAdminChangesAreAudited() async throws {
        let gateway = MemoryGateway()
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token)
        let key = try await gateway.send(.post, "/admin/v1/apps/\(appID)/keys", token: token, json: ["generate": [:] as [String: Int]])
        #expect(key.status == .created)
        #expect(key.body["status"] as? String == "active")

        let issued = try await gateway.send(
            .post, "/v1/identity_tokens",
            json: ["app_id": appID, "user_id": "ada", "nonce": "n-1", "credentials": ["type": "static"]])
        #expect(issued.status == .ok, "\(issued.body)")
        #expect((issued.body["identity_token"] as? String)?.split(separator: ".").count == 3)
        let requestID = try #require(issued.headers[HTTPField.Name("x-request-id")!])
        let events = gateway.memory.events.map(\.event)
        #expect(events == ["test.setup", "admin.app.created", "admin.key.created", "token.issued"])
        #expect(gateway.memory.events.last?.requestID == requestID)
        #expect(gateway.memory.events.last?.userID == "ada")
    }

    /// A token whose row cannot be written is never answered.
    @Test func noTokenLeavesWhenItsRowCannotBeWritten() async throws {
        let gateway = MemoryGateway()
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token)
        _ = try await gateway.send(.post, "/admin/v1/apps/\(appID)/keys", token: token, json: ["generate": [:] as [String: Int]])
        let request: [String: any Sendable] = [
            "app_id": appID, "user_id": "ada", "nonce": "n", "credentials": ["type": "static"],
        ]
        #expect(try await gateway.send(.post, "/v1/identity_tokens", json: request).status == .ok)
        gateway.memory.failing = true
        var answers: [HTTPResponse.Status] = []
        for _ in 0..<5 {
            let refused = try await gateway.send(.post, "/v1/identity_tokens", json: request)
            #expect(refused.body["identity_token"] == nil)
            #expect(refused.body["error"] as? String == "unavailable")
            answers.append(refused.status)
        }
        #expect(answers == Array(repeating: .serviceUnavailable, count: 5))
        #expect(gateway.memory.events.filter { $0.event == "token.issued" }.count == 1)
    }

    /// An app's admin sees its own app and nothing of another: the other is 404, as if it did not exist.
    @Test func anAppAdminReachesOnlyItsOwnApp() async throws {
        let gateway = MemoryGateway()
        let token = try await gateway.operatorToken()
        let own = try await gateway.createApp(token: token)
        let other = try await gateway.createApp(token: token)
        let appToken = try await gateway.adminToken(.app(try #require(AppID(own))))
        #expect(try await gateway.send(.get, "/admin/v1/apps/\(own)", token: appToken).status == .ok)
        for (method, path) in [
            (HTTPRequest.Method.get, "/admin/v1/apps/\(other)"), (.get, "/admin/v1/apps/\(other)/keys"),
            (.post, "/admin/v1/apps/\(other)/keys"), (.delete, "/admin/v1/apps/\(other)"),
        ] {
            let answer = try await gateway.send(method, path, token: appToken, json: method == .post ? ["generate": [:] as [String: Int]] : nil)
            #expect(answer.status == .notFound, "\(method) \(path): \(answer.body)")
        }
        #expect(try await gateway.send(.get, "/admin/v1/apps", token: appToken).status == .forbidden)
        #expect(!gateway.memory.events.contains { $0.appID?.uuid.uuidString.lowercased() == other && $0.event != "admin.app.created" })
    }

    @Test func adminCallsWithoutALiveTokenAre401sThatSayWhy() async throws {
        let gateway = MemoryGateway()
        let live = try await gateway.operatorToken()
        for token in [nil, "not-a-token", AdminTokenSecret.generate().text] {
            let answer = try await gateway.send(.get, "/admin/v1/apps", token: token)
            #expect(answer.status == .unauthorized)
            #expect(answer.body["error"] as? String == "unauthorized")
            #expect(answer.body["request_id"] as? String != nil)
        }
        #expect(try await gateway.send(.get, "/admin/v1/apps", token: live).status == .ok)
    }

    /// The key limit is the store's to enforce; the route answers its refusal as a 409.
    @Test func theKeyPastTheLimitIsAConflict() async throws {
        let gateway = MemoryGateway()
        let token = try await gateway.operatorToken()
        let appID = try await gateway.createApp(token: token)
        var statuses: [HTTPResponse.Status] = []
        for _ in 0...StoredKey.maximumPerApp {
            let pem = TestKeys.shared.privateKeyPEM
            statuses.append(
                try await gateway.send(
                    .post, "/admin/v1/apps/\(appID)/keys", token: token,
                    json: ["key_id": UUID().uuidString, "private_key_pem": pem]
                ).status)
        }
        #expect(statuses.filter { $0 == .created }.count == StoredKey.maximumPerApp)
        #expect(statuses.last == .conflict)
        #expect(gateway.memory.events.filter { $0.event == "admin.key.created" }.count == StoredKey.maximumPerApp)
    }
}
