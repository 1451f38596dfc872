import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import Testing

/// `GET /metrics` in Prometheus text, moving with the traffic.
@Suite struct MetricsTests {
    /// The value of the first sample of `name` whose line contains every one of `labels`.
    static func sample(_ text: String, _ name: String, _ labels: [String]) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            if labels.allSatisfy({ line.contains($0) }), let value = line.split(separator: " ").last.flatMap({ Double($0) }) {
                return value
            }
        }
        return nil
    }

    @Test func countersMoveAfterTokenRequests() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            let server = try await GatewayProcess.start(
                ["serve"], environment: serveEnvironment(url, bootstrap: bootstrap))
            let base = "http://127.0.0.1:\(server.port)"
            let appID = try await ResilienceTests.createApp(base: base, token: bootstrap)
            let before = try await HTTPCall.send("GET", "\(base)/metrics")
            #expect(before.status == 200)
            let issuedLabels = [#"outcome="issued""#, #"app_id="\#(appID)""#, #"credential_type="static""#]
            #expect(Self.sample(before.text, "gateway_tokens_total", issuedLabels) == nil)

            #expect(try await ResilienceTests.attempt(base, appID, password: "right") == 200)
            #expect(try await ResilienceTests.attempt(base, appID, password: "right") == 200)
            #expect(try await ResilienceTests.attempt(base, appID, password: "wrong") == 401)
            // Ids, types and paths a client makes up must not become labels:
            // each would be a new series for as long as the process lives.
            let madeUp = UUID().lowercasedText
            let unknownApp = try await HTTPCall.send(
                "POST", "\(base)/v1/identity_tokens", json: ["app_id": madeUp, "user_id": "a", "nonce": "n"])
            #expect(unknownApp.status == 404)
            let unknownType = try await HTTPCall.send(
                "POST", "\(base)/v1/identity_tokens",
                json: ["app_id": appID, "user_id": "a", "nonce": "n", "credentials": ["type": "made-up-\(madeUp)"]])
            #expect(unknownType.status == 400)
            #expect(try await HTTPCall.send("GET", "\(base)/made-up-\(madeUp)").status == 404)
            #expect(try await HTTPCall.send("DELETE", "\(base)/v1/apps/\(madeUp)/jwks.json").status == 405)
            let after = try await HTTPCall.send("GET", "\(base)/metrics").text
            #expect(!after.contains(madeUp))
            #expect(Self.sample(after, "gateway_tokens_total", [#"app_id="none""#, #"reason="unknown_app""#]) == 1)
            #expect(
                Self.sample(after, "gateway_tokens_total", [#"app_id="\#(appID)""#, #"credential_type="none""#, #"reason="unsupported_credential_type""#]) == 1)
            #expect(Self.sample(after, "gateway_http_requests_total", [#"route="GET unmatched""#, #"status="404""#]) == 1)
            #expect(Self.sample(after, "gateway_http_requests_total", [#"route="DELETE /v1/apps/{app_id}/jwks.json""#, #"status="405""#]) == 1)
            #expect(Self.sample(after, "gateway_tokens_total", issuedLabels) == 2)
            #expect(Self.sample(after, "gateway_tokens_total", [#"outcome="denied""#, #"reason="bad_password""#]) == 1)
            #expect(Self.sample(after, "gateway_http_requests_total", [#"route="POST /v1/identity_tokens""#, #"status="200""#]) == 2)
            #expect(Self.sample(after, "gateway_http_requests_total", [#"route="POST /admin/v1/apps/{app_id}/keys""#]) == 1)
            #expect(Self.sample(after, "gateway_http_request_duration_seconds_count", [#"route="POST /v1/identity_tokens""#]) == 5)
            // Each token was one item (its counters and row in one statement); the
            // wrong password three (its counters, its failure, its row): five items, one at a time.
            #expect((Self.sample(after, "gateway_batch_size_count", [#"queue="group_commit""#]) ?? 0) >= 5)
            #expect((Self.sample(after, "gateway_batch_size_sum", [#"queue="group_commit""#]) ?? 0) >= 5)
            #expect(Self.sample(after, "gateway_batch_commit_seconds_count", [#"queue="group_commit""#]) != nil)
            // Nothing waited for the database, and the loss counter is there at zero for alerts.
            #expect(Self.sample(after, "gateway_audit_backlog_rows", []) == 0)
            #expect(Self.sample(after, "gateway_audit_rows_lost_total", []) == 0)
            // The pool as PostgreSQL sees it: at least the sampling connection, never more than the limit.
            let limit = Self.sample(after, "gateway_database_connections_limit", [])
            let open = ["active", "idle", "idle_in_transaction"].compactMap {
                Self.sample(after, "gateway_database_connections", [#"state="\#($0)""#])
            }
            #expect(limit == 20)
            #expect(open.count == 3)
            #expect((1...20).contains(open.reduce(0, +)), "\(open)")
            #expect(await server.stop() == 0)
        }
    }

    /// A webhook app whose service fails: each failure's reason, then the
    /// breaker open, in the running process's metrics.
    @Test func webhookCallsAndTheirBreakerShowInMetrics() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            try await FakeHTTPServer.with(statuses: [200, 500, 503]) { tenant, _ in
                let bootstrap = AdminTokenSecret.generate().text
                var environment = serveEnvironment(url, bootstrap: bootstrap)
                environment["GATEWAY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = "true"
                let server = try await GatewayProcess.start(["serve"], environment: environment)
                let base = "http://127.0.0.1:\(server.port)"
                let appID = UUID().lowercasedText
                let options: [String: any Sendable] = [
                    "url": tenant, "secret": "0123456789abcdef", "timeout_ms": 10000,
                    "circuit_breaker": ["failures": 2] as [String: any Sendable],
                ]
                let created = try await HTTPCall.send(
                    "POST", "\(base)/admin/v1/apps", token: bootstrap,
                    json: [
                        "app_id": appID, "name": "webhook", "environment": "development", "provider_id": UUID().uuidString,
                        "credential_types": ["webhook"],
                        "plugins": ["webhook": options] as [String: any Sendable],
                    ])
                #expect(created.status == 201, "\(created.text)")
                _ = try await HTTPCall.send("POST", "\(base)/admin/v1/apps/\(appID)/keys", token: bootstrap, json: ["generate": ["bits": 2048]])
                var statuses: [Int] = []
                for _ in 0..<4 {
                    let login = try await HTTPCall.send(
                        "POST", "\(base)/v1/identity_tokens",
                        json: ["app_id": appID, "user_id": "ada", "nonce": "n", "credentials": ["type": "webhook", "password": "p"]])
                    statuses.append(login.status)
                }
                // The fake's first answer is 200 with a body that is no verdict (a 502, but not the service
                // failing), then a 500 and a 503: two failures of the service open the breaker.
                #expect(statuses == [502, 502, 502, 502])
                let text = try await HTTPCall.send("GET", "\(base)/metrics").text
                let app = #"app_id="\#(appID)""#
                #expect(Self.sample(text, "gateway_webhook_calls_total", [app, #"outcome="webhook_bad_answer""#]) == 1)
                #expect(Self.sample(text, "gateway_webhook_calls_total", [app, #"outcome="webhook_bad_status""#]) == 2)
                #expect(Self.sample(text, "gateway_webhook_calls_total", [app, #"outcome="webhook_circuit_open""#]) == 1)
                #expect(Self.sample(text, "gateway_webhook_circuit_open", [app]) == 1)
                #expect(Self.sample(text, "gateway_tokens_total", [app, #"reason="webhook_circuit_open""#]) == 1)
                #expect(await server.stop() == 0)
            }
        }
    }

    @Test func metricsCanHaveAPortOfTheirOwn() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = serveEnvironment(url, bootstrap: bootstrap)
            environment["GATEWAY_METRICS_PORT"] = "0"
            let server = try await GatewayProcess.start(["serve"], environment: environment, listeners: 2)
            // Both servers log the same "listening on" line: the metrics one answers /metrics.
            var metricsPort = server.ports[0]
            var mainPort = server.ports[1]
            if try await HTTPCall.send("GET", "http://127.0.0.1:\(metricsPort)/metrics").status != 200 {
                swap(&metricsPort, &mainPort)
            }
            let base = "http://127.0.0.1:\(mainPort)"
            let appID = try await ResilienceTests.createApp(base: base, token: bootstrap)
            #expect(try await ResilienceTests.attempt(base, appID, password: "right") == 200)
            #expect(try await HTTPCall.send("GET", "\(base)/metrics").status == 404)
            let metrics = try await HTTPCall.send("GET", "http://127.0.0.1:\(metricsPort)/metrics")
            #expect(metrics.status == 200)
            #expect(Self.sample(metrics.text, "gateway_tokens_total", [#"outcome="issued""#]) == 1)
            #expect(await server.stop() == 0)
        }
    }

    /// Production keeps metrics off the public port: on a listener of its
    /// own (9090 unless `metrics.port` says otherwise, which
    /// GatewayApplicationTests checks; here a free port, so that no test
    /// holds a fixed one).
    @Test func inProductionMetricsAreOffTheMainPort() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_MODE"] = "production"
            environment["GATEWAY_METRICS_PORT"] = "0"
            let server = try await GatewayProcess.start(["serve"], environment: environment, listeners: 2)
            #expect(server.ports.count == 2)
            var statuses: [Int] = []
            for port in server.ports {
                statuses.append(try await HTTPCall.send("GET", "http://127.0.0.1:\(port)/metrics").status)
            }
            #expect(statuses.sorted() == [200, 404], "\(server.ports): \(statuses)")
            #expect(await server.stop() == 0)
            // The test database is reached without TLS: production says so at start.
            #expect(server.printed.contains("database.url does not require TLS") == !url.contains("host=/"))
        }
    }
}
