import Foundation
import GatewayCore
import GatewayHTTP
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayPostgres
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// U+0000 can be in no PostgreSQL text: a request carrying one, in any field
/// that could reach the database, is refused at the boundary with a 400
/// naming the field, and the requests around it are audited as ever.
@Suite struct NulCharacterTests {
    static let json = "application/json"
    static let form = "application/x-www-form-urlencoded"

    /// (content type, body, the message's start) for every token-request field; APP is replaced by the app id.
    static let tokenRequests: [(String, String, String)] = [
        (json, #"{"app_id":"APP","user_id":"al\u0000ice","nonce":"n","credentials":{"type":"static","password":"x"}}"#, "user_id must not contain control characters"),
        (json, #"{"app_id":"APP","nonce":"n\u0000","credentials":{"type":"static","password":"x"}}"#, "nonce must be visible ASCII characters only"),
        (json, #"{"app_id":"APP","user_id":"alice","nonce":"n","credentials":{"type":"st\u0000atic","password":"x"}}"#, "credentials.type must not contain control characters"),
        (json, #"{"app_id":"APP","user_id":"alice","nonce":"n","credentials":{"type":"static","password":"\u0000"}}"#, "credentials.password must not contain the NUL character"),
        (json, #"{"app_id":"APP","user_id":"alice","nonce":"n","credentials":{"type":"static","pass\u0000word":"x"}}"#, "credentials names a field with control characters"),
        (json, #"{"app_\u0000id":"APP"}"#, "app_id is required"),
        (form, "app_id=APP&user_id=alice&nonce=n&credentials[type]=st%00atic&credentials[password]=x", "credentials.type must not contain control characters"),
        (form, "app_id=APP&user_id=alice&nonce=n&credentials[type]=static&credentials[password]=%00", "credentials.password must not contain the NUL character"),
        (form, "app_id=APP&user_id=alice&nonce=n&credentials[type]=static&credentials[pass%00]=x", "credentials names a field with control characters"),
        (form, "app_id=APP&user_id=al%00ice&nonce=n&credentials[type]=static&credentials[password]=x", "user_id must not contain control characters"),
    ]

    @Test func everyTokenFieldRefusesNulNamingTheFieldAndTheTrailKeepsUp() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp()
            let hostile = Self.tokenRequests.map { ($0.0, $0.1.replacingOccurrences(of: "APP", with: app.appID.description), $0.2) }
            for (contentType, body, message) in hostile {
                let response = try await gateway.test { try await $0.post(contentType: contentType, body: body) }
                #expect(response.status == .badRequest, "\(body)")
                let text = try errorBody(response)["message"] as? String ?? ""
                #expect(text.hasPrefix(message), "\(body): \(text)")
            }
            // A flood of them beside ordinary failures: every row written, none kept in memory.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<40 {
                    let (contentType, body, _) = hostile[index % hostile.count]
                    group.addTask { _ = try await gateway.test { try await $0.post(contentType: contentType, body: body) } }
                }
                for _ in 0..<10 {
                    group.addTask {
                        _ = try await gateway.test {
                            try await $0.postJSON(["app_id": app.appID.description, "user_id": "bob", "nonce": "n",
                                                   "credentials": ["type": "static", "password": "guess"]])
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(gateway.ledger.keptCount == 0)
            let rows = try await gateway.auditRows()
            #expect(rows.count == hostile.count + 50)
            #expect(rows.filter { $0.userID == "bob" }.count == 10)
        }
    }

    @Test func adminBodiesRefuseNulNamingTheField() async throws {
        try await TestGateway.with { gateway in
            let app = try await gateway.createApp()
            let token = try await gateway.adminToken(.operator)
            let renamed = try await gateway.admin(.patch, "/admin/v1/apps/\(app.appID)", token: token, json: ["name": "a\u{0}b"])
            #expect(renamed.status == .badRequest)
            #expect((try errorBody(renamed)["message"] as? String)?.hasPrefix("name must not contain the NUL character") == true)
        }
    }
}
