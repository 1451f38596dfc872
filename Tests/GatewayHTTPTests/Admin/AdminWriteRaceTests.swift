import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// An app admin's write never undoes an operator's: the check of what an app
/// admin may change and the write read the same row, even when the two
/// writes arrive at once on two replicas.
@Suite struct AdminWriteRaceTests: ConcurrentAttack {
    static let rounds = 20
    static let renamesPerRound = 16

    @Test func anOperatorsDisableHoldsAgainstParallelRenamesByTheAppsAdminOnAnotherReplica() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createApp()
            let path = "/admin/v1/apps/\(app.appID)"
            let operatorToken = try await gateways[0].adminToken(.operator)
            let appAdmin = try await gateways[0].adminToken(.app(app.appID))
            var undone = 0
            for round in 0..<Self.rounds {
                let enabled = try await gateways[0].admin(.patch, path, token: operatorToken, json: ["enabled": true])
                #expect(enabled.status == .ok)
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for rename in 0..<Self.renamesPerRound {
                        group.addTask {
                            try await gateways[1].admin(.patch, path, token: appAdmin, json: ["name": "round \(round) rename \(rename)"]).status
                        }
                        if rename == Self.renamesPerRound / 2 {
                            group.addTask {
                                try await gateways[0].admin(.patch, path, token: operatorToken, json: ["enabled": false]).status
                            }
                        }
                    }
                    return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
                let shown = try jsonObject(try await gateways[1].admin(.get, path, token: operatorToken))
                if shown["enabled"] as? Bool != false { undone += 1 }
            }
            #expect(undone == 0, "the operator's disable was written over in \(undone) of \(Self.rounds) rounds")
        }
    }

    @Test func anAppAdminCannotReEnableWhileTheOperatorDisablesAtTheSameMoment() async throws {
        try await withTwoInstances { gateways in
            let app = try await gateways[0].createApp()
            let path = "/admin/v1/apps/\(app.appID)"
            let operatorToken = try await gateways[0].adminToken(.operator)
            let appAdmin = try await gateways[0].adminToken(.app(app.appID))
            // Tightening a limit is the app admin's; each of these carries the whole stored row in the old code.
            for round in 0..<Self.rounds {
                #expect(try await gateways[0].admin(.patch, path, token: operatorToken, json: ["enabled": true]).status == .ok)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for attempt in 0..<Self.renamesPerRound {
                        group.addTask {
                            _ = try await gateways[attempt % 2].admin(
                                .patch, path, token: appAdmin,
                                json: ["rate_limits": ["user_failures": ["limit": 3 + (round + attempt) % 5, "period_seconds": 900]]])
                        }
                    }
                    group.addTask {
                        _ = try await gateways[1].admin(.patch, path, token: operatorToken, json: ["enabled": false])
                    }
                    try await group.waitForAll()
                }
                let shown = try jsonObject(try await gateways[0].admin(.get, path, token: operatorToken))
                #expect(shown["enabled"] as? Bool == false, "round \(round)")
            }
        }
    }
}
