import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayTestSupport
import Testing

/// Traces as an operator's collector receives them: a gateway process
/// exports over OTLP/HTTP to `Tests/Vendors/otlp_receiver.py`, which decodes
/// each export with OpenTelemetry's own protobuf definitions
/// (opentelemetry-proto). The tests read the span trees back from it.
@Suite struct TracingTests {
    /// One decoded span.
    struct ReceivedSpan {
        let traceID: String
        let spanID: String
        let parentSpanID: String
        let name: String
        let kind: String
        let status: String
        let attributes: [String: any Sendable]
        let startNanoseconds: UInt64
        let endNanoseconds: UInt64
        let serviceName: String?

        init(_ json: [String: any Sendable]) {
            traceID = json["trace_id"] as? String ?? ""
            spanID = json["span_id"] as? String ?? ""
            parentSpanID = json["parent_span_id"] as? String ?? ""
            name = json["name"] as? String ?? ""
            kind = json["kind"] as? String ?? ""
            status = json["status"] as? String ?? ""
            attributes = json["attributes"] as? [String: any Sendable] ?? [:]
            startNanoseconds = (json["start_unix_nano"] as? NSNumber)?.uint64Value ?? 0
            endNanoseconds = (json["end_unix_nano"] as? NSNumber)?.uint64Value ?? 0
            serviceName = (json["resource"] as? [String: any Sendable])?["service.name"] as? String
        }

        func text(_ key: String) -> String? { attributes[key] as? String }
        func number(_ key: String) -> Int? { (attributes[key] as? NSNumber)?.intValue }
    }

    /// The spans of one trace, by parent.
    struct Tree {
        let spans: [ReceivedSpan]

        var root: ReceivedSpan? { spans.first { $0.kind == "SPAN_KIND_SERVER" } }
        func children(of span: ReceivedSpan) -> [ReceivedSpan] { spans.filter { $0.parentSpanID == span.spanID } }
        func named(_ name: String) -> [ReceivedSpan] { spans.filter { $0.name == name } }

        /// Every span below the root, its name indented by depth, with its duration.
        var drawing: String {
            guard let root else { return "(no server span)" }
            var lines: [String] = []
            func draw(_ span: ReceivedSpan, _ depth: Int) {
                let milliseconds = Double(span.endNanoseconds - span.startNanoseconds) / 1e6
                lines.append(String(repeating: "  ", count: depth) + "\(span.name)  \(String(format: "%.3f", milliseconds)) ms")
                for child in children(of: span).sorted(by: { $0.startNanoseconds < $1.startNanoseconds }) {
                    draw(child, depth + 1)
                }
            }
            draw(root, 0)
            return lines.joined(separator: "\n")
        }
    }

    /// Runs `body` with a receiver running, and stops it afterwards, whatever `body` did.
    static func withReceiver<Result: Sendable>(_ body: (GatewayProcess) async throws -> Result) async throws -> Result {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Vendors/otlp_receiver.py").path
        let receiver = try await GatewayProcess.startHelper(python, [script])
        do {
            let result = try await body(receiver)
            await receiver.stop()
            return result
        } catch {
            await receiver.stop()
            throw error
        }
    }

    static func spans(from receiver: GatewayProcess) async throws -> [ReceivedSpan] {
        let answer = try await HTTPCall.send("GET", "http://127.0.0.1:\(receiver.port)/spans")
        let list = (try JSONSerialization.jsonObject(with: Data(answer.text.utf8))) as? [[String: any Sendable]] ?? []
        return list.map(ReceivedSpan.init)
    }

    @Test func aPasswordAWebhookAndADeniedLoginArriveAsSpanTreesWithNothingSecret() async throws {
        try await Self.withReceiver { receiver in
            let webhookSecret = "trace-webhook-secret-0123456789"
            let password = "trace horse battery staple"
            let forwarded = "forwarded tenant password 77"
            let nonce = "nonce-\(UUID().uuidString)"
            try await FakeHTTPServer.with(answering: { _ in .init(body: #"{"valid":true}"#) }) { tenant, tenantServer in
                try await TestDatabase.with(migrations: []) { _, url in
                    let bootstrap = AdminTokenSecret.generate().text
                    var environment = serveEnvironment(url, bootstrap: bootstrap)
                    environment["GATEWAY_TRACING_ENDPOINT"] = "http://127.0.0.1:\(receiver.port)/v1/traces"
                    environment["GATEWAY_TRACING_SERVICE_NAME"] = "gateway-under-test"
                    environment["GATEWAY_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = "true"
                    environment["GATEWAY_LOG_FORMAT"] = "json"
                    let server = try await GatewayProcess.start(["serve"], environment: environment)
                    let base = "http://127.0.0.1:\(server.port)"
                    let appID = UUID().lowercasedText
                    let created = try await HTTPCall.send(
                        "POST", base + "/admin/v1/apps", token: bootstrap,
                        json: [
                            "app_id": appID, "name": "traced", "environment": "development", "provider_id": UUID().uuidString,
                            "credential_types": ["password", "webhook"],
                            "plugins": [
                                "webhook": ["url": tenant, "secret": webhookSecret, "timeout_ms": 10000] as [String: any Sendable]
                            ],
                        ])
                    #expect(created.status == 201, "\(created.text)")
                    let key = try await HTTPCall.send(
                        "POST", base + "/admin/v1/apps/\(appID)/keys", token: bootstrap, json: ["generate": [:] as [String: Int]])
                    #expect(key.status == 201, "\(key.text)")
                    let user = try await HTTPCall.send(
                        "PUT", base + "/admin/v1/apps/\(appID)/users/ada", token: bootstrap, json: ["password": password])
                    #expect(user.status == 201, "\(user.text)")

                    func token(_ credentials: [String: String], user: String) async throws -> HTTPCall.Answer {
                        try await HTTPCall.send(
                            "POST", base + "/v1/identity_tokens",
                            json: ["app_id": appID, "user_id": user, "nonce": nonce, "credentials": credentials])
                    }
                    let passwordLogin = try await token(["type": "password", "password": password], user: "ada")
                    #expect(passwordLogin.status == 200, "\(passwordLogin.text)")
                    let webhookLogin = try await token(["type": "webhook", "password": forwarded], user: "wendy")
                    #expect(webhookLogin.status == 200, "\(webhookLogin.text)")
                    let denied = try await token(["type": "password", "password": password + "!"], user: "ada")
                    #expect(denied.status == 401)
                    // A graceful stop sends the spans still queued.
                    #expect(await server.stop() == 0)

                    let spans = try await Self.spans(from: receiver)
                    func tree(of answer: HTTPCall.Answer) throws -> Tree {
                        let root = try #require(
                            spans.first { $0.kind == "SPAN_KIND_SERVER" && $0.text("gateway.request_id") == answer.requestID },
                            "no server span for request \(answer.requestID ?? "?") among \(spans.count)")
                        return Tree(spans: spans.filter { $0.traceID == root.traceID })
                    }

                    // The password login: where its time went, each part under the server span.
                    let login = try tree(of: passwordLogin)
                    let root = try #require(login.root)
                    #expect(root.name == "POST /v1/identity_tokens")
                    #expect(root.text("http.route") == "/v1/identity_tokens")
                    #expect(root.number("http.response.status_code") == 200)
                    #expect(root.text("gateway.app_id") == appID)
                    #expect(root.serviceName == "gateway-under-test")
                    let underRoot = Set(login.children(of: root).map(\.name))
                    for name in [
                        "tenant lookup", "credential check", "group commit wait", "group commit batch", "token signature queue",
                        "token signature",
                    ] {
                        #expect(underRoot.contains(name), "\(name) missing under the server span:\n\(login.drawing)")
                    }
                    let check = try #require(login.named("credential check").first)
                    #expect(check.text("gateway.credential.type") == "password")
                    #expect(check.text("gateway.credential.verdict") == "verified")
                    let verify = try #require(login.named("argon2id verify").first, "\(login.drawing)")
                    #expect(verify.parentSpanID == check.spanID)
                    #expect(verify.number("gateway.argon2.memory_kib") ?? 0 >= 8192)
                    #expect(verify.number("gateway.argon2.iterations") ?? 0 >= 1)
                    #expect(login.named("argon2id verify queue").first?.parentSpanID == check.spanID)
                    let select = try #require(
                        login.spans.first { $0.text("db.system.name") == "postgresql" && $0.text("db.operation.name") == "SELECT" },
                        "no database span:\n\(login.drawing)")
                    #expect(select.kind == "SPAN_KIND_CLIENT")
                    let batch = try #require(login.named("group commit batch").first)
                    #expect(batch.number("db.operation.batch.size") ?? 0 >= 1)
                    #expect(login.named("token signature").first?.text("gateway.token_profile") == "layer")
                    // Children lie within their parent.
                    for span in login.spans where span.spanID != root.spanID {
                        #expect(span.startNanoseconds >= root.startNanoseconds && span.endNanoseconds <= root.endNanoseconds)
                    }

                    // The webhook login: the call out is a client span, and the tenant saw its trace context.
                    let webhook = try tree(of: webhookLogin)
                    let call = try #require(webhook.spans.first { $0.kind == "SPAN_KIND_CLIENT" && $0.name == "POST" }, "\(webhook.drawing)")
                    #expect(call.text("server.address") == "127.0.0.1")
                    #expect(call.number("http.response.status_code") == 200)
                    #expect(call.parentSpanID == webhook.named("credential check").first?.spanID)
                    let traceparent = try #require(tenantServer.requests.last?.headers["traceparent"])
                    #expect(traceparent == "00-\(call.traceID)-\(call.spanID)-01")

                    // The denied login: a 401, the verdict's code, and no signature.
                    let refusal = try tree(of: denied)
                    #expect(refusal.root?.number("http.response.status_code") == 401)
                    #expect(refusal.named("credential check").first?.text("gateway.credential.verdict") == "bad_password")
                    #expect(refusal.named("token signature").isEmpty)

                    // The request's log lines carry its trace id.
                    #expect(server.printed.contains(#""trace_id":"\#(root.traceID)""#), "no log line names trace \(root.traceID)")

                    // Nothing secret or personal in what the collector received.
                    let raw = try await HTTPCall.send("GET", "http://127.0.0.1:\(receiver.port)/raw").text
                    #expect(raw.count > 1000)
                    let issued = [passwordLogin, webhookLogin].compactMap { $0.json["identity_token"] as? String }
                    #expect(issued.count == 2)
                    for (what, value) in [
                        ("password", password), ("forwarded password", forwarded), ("nonce", nonce),
                        ("webhook secret", webhookSecret), ("user id", "wendy"), ("bootstrap token", bootstrap),
                    ] + issued.map({ ("token", $0) }) + issued.map({ ("token signature", String($0.split(separator: ".").last ?? "")) }) {
                        #expect(!raw.contains(value), "the spans hold the \(what)")
                    }
                    print("A password login as exported:\n\(login.drawing)\nA webhook login:\n\(webhook.drawing)")
                }
            }
        }
    }

    /// A `traceparent` continues the caller's trace only when a trusted
    /// proxy sends it and `tracing.trust_incoming_parent` is on (issue 56.3):
    /// behind a proxy that passes its clients' headers through, with the
    /// setting off (the default), a client can neither force its trace id to
    /// be exported at a sample ratio of 0 nor hide its request with flags `00`.
    @Test func aTraceparentIsBelievedOnlyFromATrustedProxyWhenTheSettingSaysSo() async throws {
        struct Setup {
            let trustedProxy: Bool
            let trustsParent: Bool
            let sampleRatio: String
        }
        struct Sent {
            let setup: Setup
            let sampledFlag: Bool
            let requestID: String?
        }
        try await Self.withReceiver { receiver in
            let callerSpan = "00f067aa0ba902b7"
            @Sendable func callerTrace(_ index: Int) -> String { String(format: "4bf92f3577b34da6a3ce929d0e0e%04x", index) }
            try await TestDatabase.with(migrations: []) { _, url in
                let setups = [
                    Setup(trustedProxy: false, trustsParent: true, sampleRatio: "1"),
                    Setup(trustedProxy: true, trustsParent: false, sampleRatio: "1"),
                    Setup(trustedProxy: true, trustsParent: false, sampleRatio: "0"),
                    Setup(trustedProxy: true, trustsParent: true, sampleRatio: "1"),
                ]
                var sent: [Sent] = []
                for setup in setups {
                    var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
                    environment["GATEWAY_TRACING_ENDPOINT"] = "http://127.0.0.1:\(receiver.port)/v1/traces"
                    environment["GATEWAY_TRACING_SAMPLE_RATIO"] = setup.sampleRatio
                    if setup.trustedProxy { environment["GATEWAY_HTTP_TRUSTED_PROXIES"] = "127.0.0.1/32" }
                    if setup.trustsParent { environment["GATEWAY_TRACING_TRUST_INCOMING_PARENT"] = "true" }
                    let server = try await GatewayProcess.start(["serve"], environment: environment)
                    for sampled in [true, false] {
                        let flags = sampled ? "01" : "00"
                        let answer = try await HTTPCall.send(
                            "POST", "http://127.0.0.1:\(server.port)/v1/identity_tokens",
                            json: ["app_id": UUID().lowercasedText, "user_id": "u", "nonce": "n"],
                            headers: [
                                "traceparent": "00-\(callerTrace(sent.count))-\(callerSpan)-\(flags)", "tracestate": "vendor=1",
                            ])
                        #expect(answer.status == 404)
                        sent.append(Sent(setup: setup, sampledFlag: sampled, requestID: answer.requestID))
                    }
                    #expect(await server.stop() == 0)
                }
                let spans = try await Self.spans(from: receiver)
                for (index, request) in sent.enumerated() {
                    let setup = request.setup
                    let what = "\(setup), flag \(request.sampledFlag ? "01" : "00")"
                    let root = spans.first { $0.kind == "SPAN_KIND_SERVER" && $0.text("gateway.request_id") == request.requestID }
                    let continued = setup.trustedProxy && setup.trustsParent
                    if continued {
                        // The proxy's trace and its decision: sampled is continued, unsampled records nothing.
                        if request.sampledFlag {
                            #expect(root?.traceID == callerTrace(index) && root?.parentSpanID == callerSpan, "\(what)")
                        } else {
                            #expect(root == nil, "\(what): an unsampled trace was exported")
                        }
                    } else {
                        // A trace of the gateway's own, kept by its own ratio whatever the flags said.
                        #expect(!spans.contains { $0.traceID == callerTrace(index) }, "\(what): the client's trace id was exported")
                        if setup.sampleRatio == "1" {
                            #expect(root != nil && root?.parentSpanID.isEmpty == true, "\(what): the request was hidden from tracing")
                        } else {
                            #expect(root == nil, "\(what): the client forced its trace to be exported")
                        }
                    }
                }
            }
        }
    }

    /// With the collector away, token requests are answered as before and
    /// the spans given up are counted in `/metrics`.
    @Test func withTheCollectorDownRequestsAreAnsweredAndDroppedSpansCounted() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = serveEnvironment(url, bootstrap: bootstrap)
            // Nothing listens on the discard port: every export is refused.
            environment["GATEWAY_TRACING_ENDPOINT"] = "http://127.0.0.1:9/v1/traces"
            environment["GATEWAY_TRACING_EXPORT_TIMEOUT_MS"] = "1000"
            environment["OTEL_BSP_SCHEDULE_DELAY"] = "100"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let base = "http://127.0.0.1:\(server.port)"
            let appID = try await ResilienceTests.createApp(base: base, token: bootstrap)
            for _ in 0..<20 {
                let answer = try await HTTPCall.send(
                    "POST", base + "/v1/identity_tokens",
                    json: ["app_id": appID, "user_id": "frank", "nonce": "n", "credentials": ["type": "static", "password": "right"]])
                #expect(answer.status == 200, "\(answer.text)")
            }
            // The exporter's failures arrive on its own schedule: read the counter until it moves.
            var dropped: Double?
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(60)
            while dropped == nil, clock.now < deadline {
                let metrics = try await HTTPCall.send("GET", base + "/metrics").text
                dropped = MetricsTests.sample(metrics, "gateway_trace_spans_dropped_total", [#"reason="export_failed""#])
                if dropped == nil { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect((dropped ?? 0) >= 1, "no dropped spans counted")
            #expect(await server.stop() == 0)
        }
    }
}
