import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
@testable import PasswordPlugin
import Testing

/// An address belongs to one user of an app, however it is written: by
/// the admin API's PUT, PATCH or import, at once on two replicas; a user
/// who has it keeps it when sent again.
@Suite struct UserAddressTests: ConcurrentAttack {
    static let hash = UserImportTests.hash

    @Test func anAddressGoesToOneUserHoweverManyWritesAskAtOnce() async throws {
        try await withTwoInstances(plugins: .passwordTests) { gateways in
            let app = try await gateways[0].createPasswordApp()
            let token = try await gateways[0].operatorToken()
            // Twenty new users at once over two replicas, each with the same address in its own case.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        let answer = try await gateways[index % 2].admin(
                            .put, TestGateway.userPath("racer-\(index)", in: app), token: token,
                            json: ["password_hash": Self.hash, "email": index % 2 == 0 ? "Same@Example.com" : "same@example.COM"])
                        return Int(answer.status.code)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 1 && statuses.filter { $0 == 409 }.count == 19, "\(statuses.sorted())")
            let holders = try await gateways[0].pluginServices.passwordUsers.find(email: "same@example.com", in: app.appID)
            #expect(holders.count == 1)
            let holder = try #require(holders.first?.userID)

            let gateway = gateways[1]
            let taken = try await gateway.admin(
                .patch, TestGateway.userPath("racer-0" == holder ? "racer-1" : "racer-0", in: app), token: token,
                json: ["email": "SAME@example.com"])
            #expect(taken.status == .conflict || taken.status == .notFound, "\(text(taken))")
            #expect(try await gateway.admin(.put, TestGateway.userPath("other", in: app), token: token, json: ["password_hash": Self.hash])
                .status == .created)
            let patched = try await gateway.admin(
                .patch, TestGateway.userPath("other", in: app), token: token, json: ["email": "same@EXAMPLE.com"])
            #expect(try patched.status == .conflict && jsonObject(patched)["error"] as? String == "email_taken", "\(text(patched))")
            #expect(try jsonObject(try await gateway.admin(.get, TestGateway.userPath("other", in: app), token: token))["email"] == nil)

            // An import: the line that takes the address fails, naming it; the rest are stored.
            let lines = [
                #"{"user_id": "i1", "password_hash": "\#(Self.hash)", "email": "i1@example.com"}"#,
                #"{"user_id": "i2", "password_hash": "\#(Self.hash)", "email": "Same@example.com"}"#,
                #"{"user_id": "i3", "password_hash": "\#(Self.hash)", "email": "I1@example.com"}"#,
            ]
            let imported = try await gateway.test(over: .router) { client in
                try await client.execute(
                    uri: "/admin/v1/apps/\(app.appID)/users:import", method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/x-ndjson"],
                    body: ByteBuffer(string: lines.joined(separator: "\n") + "\n"))
            }
            let summary = try jsonObject(imported)
            #expect(summary["created"] as? Int == 1 && summary["failed"] as? Int == 2, "\(text(imported))")
            let errors = try #require(summary["errors"] as? [[String: Any]])
            #expect(errors.compactMap { $0["line"] as? Int } == [2, 3] && errors.allSatisfy { $0["error"] as? String == "email_taken" })

            // The holder sends its address again, in another case: its own.
            let again = try await gateway.admin(
                .put, TestGateway.userPath(holder, in: app), token: token, json: ["password_hash": Self.hash, "email": "SAME@example.com"])
            #expect(again.status == .ok, "\(text(again))")
        }
    }
}
