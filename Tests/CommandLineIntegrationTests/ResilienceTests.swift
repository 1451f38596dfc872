import Foundation
import GatewayCore
import GatewayTestSupport
import PostgresNIO
import Testing

/// Limits and the audit trail as replicas share them, and what happens when
/// PostgreSQL goes away and comes back. One test at a time: each starts
/// gateway processes, and two a cluster of their own, and together they held
/// two cores long enough to time out other suites' local webhooks.
@Suite(.serialized) struct ResilienceTests {
    /// Creates a development app and its key through the admin API; by default with one static user.
    /// `unavailableRetries`: how many 503s each step may answer before it counts, for a gateway whose
    /// database timeout is short on purpose (a loaded full run once took more than its one second to create
    /// the app); a creation that committed though it answered 503 is found (409) when sent again.
    static func createApp(
        base: String, token: String, rateLimits: [String: any Sendable] = [:], credentialTypes: [String] = ["static"],
        plugins: [String: any Sendable] = ["static": ["users": [["user_id": "frank", "password": "right"]]]],
        unavailableRetries: Int = 0
    ) async throws -> String {
        let appID = UUID().lowercasedText
        func send(_ path: String, _ json: [String: any Sendable], accepting: Set<Int>) async throws {
            var answer = try await HTTPCall.send("POST", "\(base)\(path)", token: token, json: json)
            for _ in 0..<unavailableRetries where answer.status == 503 {
                answer = try await HTTPCall.send("POST", "\(base)\(path)", token: token, json: json)
            }
            #expect(accepting.contains(answer.status), "\(path): \(answer.status) \(answer.text)")
        }
        try await send(
            "/admin/v1/apps",
            [
                "app_id": appID, "name": "resilience", "environment": "development", "provider_id": UUID().uuidString,
                "credential_types": credentialTypes, "rate_limits": rateLimits, "plugins": plugins,
            ], accepting: unavailableRetries > 0 ? [201, 409] : [201])
        try await send("/admin/v1/apps/\(appID)/keys", ["generate": ["bits": 2048]], accepting: [201])
        return appID
    }

    static func attempt(_ base: String, _ appID: String, password: String) async throws -> Int {
        try await timedAttempt(base, appID, password: password).status
    }

    @Test func aPerUserLimitHoldsInTotalAcrossReplicas() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            let environment = serveEnvironment(url, bootstrap: bootstrap)
            let a = try await GatewayProcess.start(["serve"], environment: environment)
            let b = try await GatewayProcess.start(["serve"], environment: environment)
            let bases = ["http://127.0.0.1:\(a.port)", "http://127.0.0.1:\(b.port)"]
            let appID = try await Self.createApp(
                base: bases[0], token: bootstrap, rateLimits: ["user_failures": ["limit": 4, "period_seconds": 900]])

            var statuses: [Int] = []
            for attempt in 0..<10 {
                statuses.append(try await Self.attempt(bases[attempt % 2], appID, password: "wrong"))
            }
            #expect(statuses == [401, 401, 401, 401, 429, 429, 429, 429, 429, 429])
            #expect(await a.stop() == 0)
            #expect(await b.stop() == 0)
        }
    }

    /// With `database.retry_window_ms` at 0, a request answers 503 at the first failure.
    @Test func withPostgresDownRequestsFailFastAndTheGatewayRecoversByItself() async throws {
        try await Self.withOwnCluster { url, folder, startCluster in
            try await Self.outage(url: url, folder: folder, startCluster: startCluster)
        }
    }

    /// Issue 56: a failover, or a restart, costs latency, not errors. PostgreSQL
    /// is stopped with requests in flight and more arriving, and started
    /// again: every request waits for it within the retry window and gets its
    /// token, with its one `token.issued` row, and the replica stays in
    /// rotation meanwhile (`/readyz` 200).
    @Test func aRestartWithinTheRetryWindowCostsLatencyNotErrors() async throws {
        try await Self.withOwnCluster { url, folder, startCluster in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = serveEnvironment(url, bootstrap: bootstrap, databaseTimeoutMs: 1000)
            environment["GATEWAY_DATABASE_RETRY_WINDOW_MS"] = "60000"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let base = "http://127.0.0.1:\(server.port)"
            let appID = try await Self.createApp(base: base, token: bootstrap)
            #expect(try await Self.attempt(base, appID, password: "right") == 200)

            let stopped = try await GatewayProcess.run(["local-postgres", "stop", "--data-dir", folder.path])
            #expect(stopped.status == 0, "\(stopped.output)")
            let (waiting, restartedAt, later) = try await withThrowingTaskGroup(of: TimedAnswer.self) { group in
                for _ in 0..<5 { group.addTask { try await Self.timedAttempt(base, appID) } }
                // The replica's own check notices the outage (its ping takes 500 ms to give up), and stays
                // ready meanwhile; the five requests are by then waiting in it.
                let deadline = ContinuousClock.now + .seconds(20)
                var ready = try await HTTPCall.send("GET", "\(base)/readyz")
                while !ready.text.contains("not answering for now"), ready.status == 200, ContinuousClock.now < deadline {
                    ready = try await HTTPCall.send("GET", "\(base)/readyz")
                }
                #expect(ready.status == 200, "\(ready.text)")
                #expect(ready.text.contains("not answering for now"), "\(ready.text)")
                let restartedAt = ContinuousClock.now
                let restarted = try await GatewayProcess.run(startCluster)
                #expect(restarted.status == 0, "\(restarted.output)")
                let waiting = try await group.reduce(into: [TimedAnswer]()) { $0.append($1) }
                var later: [TimedAnswer] = []
                for _ in 0..<5 { later.append(try await Self.timedAttempt(base, appID)) }
                return (waiting, restartedAt, later)
            }
            let answers = waiting + later
            #expect(answers.map(\.status) == Array(repeating: 200, count: 10), "\(answers.map(\.status))")
            #expect(waiting.allSatisfy { $0.answeredAt > restartedAt }, "a request sent with the database down was answered before it came back")
            #expect(await server.stop() == 0)
            let issued = try await TestDatabase.withClient(url) { client in
                var requestIDs: [String] = []
                for try await requestID in try await client.query(
                    "SELECT request_id FROM audit_events WHERE event = 'token.issued'", logger: TestDatabase.logger
                ).decode(String.self) {
                    requestIDs.append(requestID)
                }
                return requestIDs
            }
            for answer in answers {
                #expect(issued.filter { $0 == answer.requestID }.count == 1, "token \(answer.requestID) has no single issued row")
            }
        }
    }

    /// Runs `body` with a PostgreSQL cluster of the test's own, which it may stop and start
    /// (`startCluster` starts it again), stopped and removed afterwards whatever happened.
    private static func withOwnCluster(_ body: (_ url: String, _ folder: URL, _ startCluster: [String]) async throws -> Void)
        async throws
    {
        let folder = FileManager.default.temporaryDirectory.appending(path: "gateway-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        // Below Linux's ephemeral range (32768-60999), so no outgoing connection holds it.
        let port = "\(Int.random(in: 20_000..<30_000))"
        let startCluster = ["local-postgres", "start", "--data-dir", folder.path, "--port", port, "--throwaway"]
        let started = try await GatewayProcess.run(startCluster)
        #expect(started.status == 0, "\(started.output)")
        // The cluster is stopped before the test returns, whatever happened in it.
        let outcome: Result<Void, any Error>
        do {
            let url = try #require(started.output.split(separator: "\n").last.map(String.init))
            try await body(url, folder, startCluster)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        _ = try? await GatewayProcess.run(["local-postgres", "stop", "--data-dir", folder.path])
        try? FileManager.default.removeItem(at: folder)
        try outcome.get()
    }

    /// Tokens, then PostgreSQL stopped under load, then started again.
    private static func outage(url: String, folder: URL, startCluster: [String]) async throws {
        let bootstrap = AdminTokenSecret.generate().text
        var environment = serveEnvironment(url, bootstrap: bootstrap, databaseTimeoutMs: 1000)
        environment["GATEWAY_DATABASE_RETRY_WINDOW_MS"] = "0"
        let server = try await GatewayProcess.start(["serve"], environment: environment)
        do {
            try await outage(of: server, url: url, folder: folder, startCluster: startCluster, bootstrap: bootstrap)
        } catch {
            // What the gateway logged is the best clue to a step that failed.
            Issue.record("the gateway's log:\n\(server.printed.suffix(20_000))")
            throw error
        }
    }

    /// The outage itself, against a running gateway.
    private static func outage(
        of server: GatewayProcess, url: String, folder: URL, startCluster: [String], bootstrap: String
    ) async throws {
        let base = "http://127.0.0.1:\(server.port)"
        let appID = try await Self.createApp(base: base, token: bootstrap, unavailableRetries: 3)
        // Every answer, to match against the audit rows at the end.
        var answers: [TimedAnswer] = []
        // Five tokens while PostgreSQL is up. On a loaded machine a batch may outlast the one-second timeout
        // this test sets (a full run once answered the fifth 503 after 1.5 s): such a 503 is checked with the
        // others at the end; the outage needs the tokens.
        var tokens = 0
        for _ in 0..<10 where tokens < 5 {
            let answer = try await Self.timedAttempt(base, appID)
            answers.append(answer)
            if answer.status == 200 { tokens += 1 }
            #expect(answer.status == 200 || (answer.status == 503 && answer.took >= .seconds(1)), "\(answer.status) after \(answer.took)")
        }
        #expect(tokens == 5)
        #expect(try await HTTPCall.send("GET", "\(base)/readyz").status == 200)
        #expect(try await HTTPCall.send("GET", "\(base)/healthz").status == 200)

        let stopped = try await GatewayProcess.run(["local-postgres", "stop", "--data-dir", folder.path])
        #expect(stopped.status == 0, "\(stopped.output)")
        let notReady = try await HTTPCall.send("GET", "\(base)/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.text.contains("\"reason\""))
        #expect(try await HTTPCall.send("GET", "\(base)/healthz").status == 200, "alive, though not ready")
        // The key set of an app this replica knows is served from memory: verifiers keep their keys.
        #expect(try await HTTPCall.send("GET", "\(base)/v1/apps/\(appID)/jwks.json").status == 200)
        // Validation needs the database for the key: 503 within the database timeout, not the pool's.
        let validationStarted = ContinuousClock.now
        let validation = try await HTTPCall.send(
            "POST", "\(base)/v1/identity_tokens/validate", json: ["identity_token": try #require(answers.last?.token)])
        #expect(validation.status == 503)
        #expect(ContinuousClock.now - validationStarted < .seconds(6))
        // So does the admin API: its token lookup is the first thing it asks the database.
        let adminStarted = ContinuousClock.now
        #expect(try await HTTPCall.send("GET", "\(base)/admin/v1/apps", token: bootstrap).status == 503)
        #expect(ContinuousClock.now - adminStarted < .seconds(6))
        // Under load, every request answers 503 within about twice the one-second database timeout (the limit
        // check, then, until rows wait in memory, the denial's audit write), and none gets a token. Waves of
        // five stay under URLSession's connections per host, so the time measured is the gateway's. The bound leaves
        // room for a loaded CI machine (with the whole suite running on two cores, one wave once took
        // 4.1 s) and stays far below the pool's own connect timeout.
        for _ in 0..<4 {
            try await withThrowingTaskGroup(of: TimedAnswer.self) { group in
                for _ in 0..<5 {
                    group.addTask { try await Self.timedAttempt(base, appID) }
                }
                for try await answer in group {
                    #expect(answer.status == 503)
                    #expect(answer.took < .seconds(6), "a request took \(answer.took) with the database down")
                    answers.append(answer)
                }
            }
        }

        let restarted = try await GatewayProcess.run(startCluster)
        #expect(restarted.status == 0, "\(restarted.output)")
        var recovered = false
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let answer = try await Self.timedAttempt(base, appID)
            answers.append(answer)
            if answer.status == 200 {
                recovered = true
                break
            }
            try await Task.sleep(for: .milliseconds(100))  // polling: the pool reconnects on its own schedule
        }
        #expect(recovered, "the gateway did not recover within 20 s of PostgreSQL coming back")
        var ready = false
        while ContinuousClock.now < deadline, !ready {
            ready = try await HTTPCall.send("GET", "\(base)/readyz").status == 200
            if !ready { try await Task.sleep(for: .milliseconds(100)) }  // polling: the listener reconnects on its own
        }
        #expect(ready, "/readyz did not come back after PostgreSQL did")
        #expect(await server.stop() == 0)

        // Every token that left has exactly one row. A refused request may have one only if its batch was
        // committed after the gateway stopped waiting for it (docs/limits-and-audit.md, "The audit trail"): it was answered
        // 503 no sooner than the one-second database timeout. None refused sooner claims a token.
        func requestIDs(_ event: String, reason: String? = nil) async throws -> [String] {
            try await TestDatabase.withClient(url) { client in
                let rows = try await client.query(
                    "SELECT request_id FROM audit_events WHERE event = \(event) AND reason IS NOT DISTINCT FROM \(reason)",
                    logger: TestDatabase.logger)
                var requestIDs: [String] = []
                for try await requestID in rows.decode(String.self) { requestIDs.append(requestID) }
                return requestIDs
            }
        }
        let issuedRows = try await requestIDs("token.issued")
        // Nothing lost: every refusal's row was kept in memory while PostgreSQL was away and written when it
        // came back (or at the latest at shutdown).
        let deniedRows = Set(try await requestIDs("token.denied", reason: "unavailable"))
        let refused = answers.filter { $0.status == 503 }.map(\.requestID)
        #expect(refused.count >= 20)
        #expect(refused.filter { !deniedRows.contains($0) } == [], "503s without their denial row")
        let sent = answers.filter { $0.status == 200 }.map(\.requestID)
        #expect(sent.count == 6)
        for requestID in sent {
            #expect(issuedRows.filter { $0 == requestID }.count == 1, "token \(requestID) has no single issued row")
        }
        let abandoned = Set(answers.filter { $0.status == 503 && $0.took >= .seconds(1) }.map(\.requestID))
        let unexplained = issuedRows.filter { !sent.contains($0) && !abandoned.contains($0) }
        #expect(unexplained == [], "issued rows for requests refused before the database timeout")
    }

    struct TimedAnswer: Sendable {
        let status: Int
        let requestID: String
        let took: Duration
        let answeredAt: ContinuousClock.Instant
        /// The identity token of a 200.
        let token: String?
    }

    /// A static-user token request for frank, timed.
    static func timedAttempt(_ base: String, _ appID: String, password: String = "right") async throws -> TimedAnswer {
        let started = ContinuousClock.now
        let answer = try await HTTPCall.send(
            "POST", "\(base)/v1/identity_tokens",
            json: ["app_id": appID, "user_id": "frank", "nonce": "n", "credentials": ["type": "static", "password": password]])
        let answeredAt = ContinuousClock.now
        return TimedAnswer(
            status: answer.status, requestID: answer.requestID ?? "", took: answeredAt - started, answeredAt: answeredAt,
            token: answer.json["identity_token"] as? String)
    }

    /// SIGTERM in the middle of 100 token requests: each one completes or is
    /// refused cleanly, nothing hangs, the exit is clean, and every issued
    /// token has its audit row.
    @Test func sigtermDuringABurstDrainsCleanly() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = serveEnvironment(url, bootstrap: bootstrap)
            environment["GATEWAY_SHUTDOWN_DRAIN_SECONDS"] = "1"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let base = "http://127.0.0.1:\(server.port)"
            let appID = try await Self.createApp(base: base, token: bootstrap)

            let (answered, answeredSignal) = AsyncStream.makeStream(of: Void.self)
            let outcomes = try await withThrowingTaskGroup(of: Int?.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        defer { answeredSignal.yield() }
                        return try? await Self.attempt(base, appID, password: "right")
                    }
                }
                group.addTask {
                    var seen = 0
                    for await _ in answered {
                        seen += 1
                        if seen == 10 { break }
                    }
                    let exit = await server.stop()
                    #expect(exit == 0, "\(server.printed)")
                    return nil
                }
                var outcomes: [Int?] = []
                for try await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            let statuses = outcomes.compactMap { $0 }  // nil: the stopper, or a connection refused after the stop
            #expect(outcomes.count == 101)
            #expect(statuses.allSatisfy { [200, 503].contains($0) }, "\(statuses)")
            #expect(statuses.filter { $0 == 200 }.count >= 10)
            let issued = statuses.filter { $0 == 200 }.count
            let rows = try await TestDatabase.withClient(url) { client in
                let rows = try await client.query(
                    "SELECT count(*) FROM audit_events WHERE event = 'token.issued'", logger: TestDatabase.logger)
                var total = 0
                for try await count in rows.decode(Int.self) { total = count }
                return total
            }
            #expect(rows == issued, "\(statuses)\n\(server.printed.split(separator: "\n").filter { !$0.contains("\"request\"") }.suffix(40).joined(separator: "\n"))")
            #expect(server.printed.contains("group-commit writer stopped"))
        }
    }

    /// `last_login_at` waits in memory to share a write (`password.last_login_delay_ms`, here a minute, so
    /// only the stop can write it): SIGTERM right after 20 logins still leaves each user's time stored.
    @Test func sigtermWritesTheLastLoginsHeldInMemory() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = serveEnvironment(url, bootstrap: bootstrap)
            environment["GATEWAY_PASSWORD_LAST_LOGIN_DELAY_MS"] = "60000"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let base = "http://127.0.0.1:\(server.port)"
            let appID = try await Self.createApp(
                base: base, token: bootstrap, credentialTypes: ["password"],
                plugins: ["password": ["argon2": ["memory_kib": 8192, "iterations": 1]]])
            let users = (0..<20).map { "user-\($0)" }
            for user in users {
                let put = try await HTTPCall.send(
                    "PUT", "\(base)/admin/v1/apps/\(appID)/users/\(user)", token: bootstrap, json: ["password": "correct horse"])
                #expect(put.status == 201, "\(put.text)")
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for user in users {
                    group.addTask {
                        try await HTTPCall.send(
                            "POST", "\(base)/v1/identity_tokens",
                            json: ["app_id": appID, "user_id": user, "nonce": "n", "credentials": ["type": "password", "password": "correct horse"]]
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 20))
            #expect(await server.stop() == 0, "\(server.printed)")
            let stored = try await TestDatabase.withClient(url) { client in
                let rows = try await client.query(
                    "SELECT count(*) FROM password_users WHERE app_id = \(UUID(uuidString: appID)!) AND last_login_at IS NOT NULL",
                    logger: TestDatabase.logger)
                var total = 0
                for try await count in rows.decode(Int.self) { total = count }
                return total
            }
            #expect(stored == 20, "\(server.printed.split(separator: "\n").suffix(20).joined(separator: "\n"))")
        }
    }
}
