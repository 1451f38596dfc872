import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// An app admin's write never undoes an operator's: the check of what an app
/// admin may change and the write read the same row, even when the writes
/// arrive at once on two replicas.
@Suite struct AdminWriteRaceTests: ConcurrentAttack {
    static let rounds = 12
    static let writesPerRound = 12

    @Test func anOperatorsDisableHoldsAgainstParallelWritesByTheAppsAdminOnTwoReplicas() async throws {
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
                    for write in 0..<Self.writesPerRound {
                        // Renames and tightened limits, each of which once wrote back the whole row it had read.
                        let change: [String: any Sendable] =
                            write % 2 == 0
                            ? ["name": "round \(round) write \(write)"]
                            : ["rate_limits": ["user_failures": ["limit": 9 - (round + write) % 5, "period_seconds": 900]]]
                        group.addTask { try await gateways[write % 2].admin(.patch, path, token: appAdmin, json: change).status }
                        if write == Self.writesPerRound / 2 {
                            group.addTask {
                                try await gateways[1].admin(.patch, path, token: operatorToken, json: ["enabled": false]).status
                            }
                        }
                    }
                    return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
                }
                // A tightened limit may meet an earlier, tighter one: the app admin cannot loosen it (403).
                #expect(statuses.allSatisfy { $0 == .ok || $0 == .forbidden }, "\(statuses)")
                let shown = try jsonObject(try await gateways[1].admin(.get, path, token: operatorToken))
                if shown["enabled"] as? Bool != false { undone += 1 }
                // The next round starts from no override.
                _ = try await gateways[0].admin(.patch, path, token: operatorToken, json: ["rate_limits": [String: Int]()])
            }
            #expect(undone == 0, "the operator's disable was written over in \(undone) of \(Self.rounds) rounds")
        }
    }
}
