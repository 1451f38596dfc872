import Foundation
import GatewayCore
import GatewayTestSupport
import NIOCore
import NIOPosix
import PostgresNIO
import Testing

/// Clients that misuse their connection: a connection that sends nothing, or
/// never finishes its request head (slowloris), is closed after
/// `http.idle_timeout_seconds`; pipelined and half-closed requests are
/// answered. Request bodies are RequestBodyTests'.
@Suite struct ConnectionTests {
    @Test func silentAndTricklingConnectionsAreClosedAfterTheIdleTimeout() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "1"
            let server = try await GatewayProcess.start(["serve"], environment: environment)

            let silent = try await RawClient.connect(port: server.port)
            let trickling = try await RawClient.connect(port: server.port)
            // A head that never ends. On a loaded machine the gateway may close first; that is the outcome sought.
            try? await trickling.writeAndFlush(ByteBuffer(string: "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nX-A: "))

            #expect(await RawClient.closedByTheServer(silent, within: .seconds(30)))
            #expect(await RawClient.closedByTheServer(trickling, within: .seconds(30)))
            // The gateway itself still serves.
            #expect(try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status == 200)
            #expect(await server.stop() == 0)
        }
    }

    /// RFC 9112 §9.3: an HTTP/1.0 connection ends with its response unless
    /// the request asked to keep it; clients that read to the close (THC-Hydra,
    /// old scripts) otherwise waited for the idle timeout on every request.
    @Test func anHTTP10ConnectionIsClosedAfterItsResponse() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "600"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let oneShot = try await RawClient.connect(port: server.port)
            try await oneShot.writeAndFlush(ByteBuffer(string: "GET /healthz HTTP/1.0\r\n\r\n"))
            #expect(await RawClient.closedByTheServer(oneShot, within: .seconds(30)))
            // Asked to keep it, it stays open for the next request.
            let answers = try await RawClient.converse(
                port: server.port,
                [
                    ("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", until: "}"),
                    ("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", until: "}"),
                ])
            #expect(answers.count == 2)
            #expect(await server.stop() == 0)
        }
    }

    /// Audit exports to clients that stop reading hold their sockets, not the
    /// database pool: with a pool of 3 and four stalled exports, logins go on;
    /// a fifth export at once is 503 `busy`.
    @Test func stalledAuditExportsDoNotHoldTheDatabasePool() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = serveEnvironment(url, bootstrap: bootstrap)
            environment["GATEWAY_DATABASE_MAX_CONNECTIONS"] = "3"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let base = "http://127.0.0.1:\(server.port)"
            let appID = try await ResilienceTests.createApp(base: base, token: bootstrap)
            // Far more trail than socket buffers hold: 60 000 rows, about 20 MB of NDJSON.
            try await TestDatabase.withClient(url) { client in
                try await client.query(
                    """
                    INSERT INTO audit_events (app_id, event, outcome, reason, request_id, user_agent)
                    SELECT \(UUID(uuidString: appID)!), 'token.denied', 'failure', 'bad_password', 'bulk-' || n, repeat('x', 200)
                    FROM generate_series(1, 60000) AS n
                    """, logger: TestDatabase.logger)
            }
            let request = "GET /admin/v1/audit_events HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer \(bootstrap)\r\n"
                + "Accept: application/x-ndjson\r\n\r\n"
            var stalled: [any Channel] = []
            for _ in 0..<4 {  // the exports one replica runs at once
                // Reads the answer's first bytes, then never again.
                let channel = try await RawClient.connectWithoutReading(port: server.port)
                try await channel.writeAndFlush(ByteBuffer(string: request))
                stalled.append(channel)
            }
            for channel in stalled { #expect(try await RawClient.firstBytes(of: channel).hasPrefix("HTTP/1.1 200")) }
            // Every export is stuck on a full socket; the pool is free for logins.
            for _ in 0..<5 { #expect(try await ResilienceTests.attempt(base, appID, password: "right") == 200) }
            let fifth = try await RawClient.connectWithoutReading(port: server.port)
            try await fifth.writeAndFlush(ByteBuffer(string: request))
            #expect(try await RawClient.firstBytes(of: fifth).hasPrefix("HTTP/1.1 503"))
            stalled.append(fifth)
            for channel in stalled { try? await channel.close() }
            #expect(await server.stop() == 0)
        }
    }

    /// Hundreds of connections that open and say nothing: others are served
    /// meanwhile, the server closes every one within the idle timeout, and
    /// its memory grows by less than 64 MiB for them.
    @Test func manyIdleConnectionsAreFreedAndDoNotStopOthers() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "3"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let before = try Self.residentBytes(of: server.pid)
            var idle: [any Channel] = []
            for _ in 0..<400 { idle.append(try await RawClient.connect(port: server.port)) }
            // Served meanwhile: /healthz, which asks nothing of the database (/readyz's one-second
            // database ping is what a loaded machine failed, not the connections).
            let ready = try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz")
            #expect(ready.status == 200, "\(ready.text)")
            let during = try Self.residentBytes(of: server.pid)
            #expect(during - before < 64 << 20, "\((during - before) >> 20) MiB for 400 idle connections")
            var closed = 0
            for channel in idle where await RawClient.closedByTheServer(channel, within: .seconds(60)) { closed += 1 }
            #expect(closed == idle.count)
            #expect(try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status == 200)
            #expect(await server.stop() == 0)
        }
    }

    /// Requests sent back to back in one write are each answered, in order.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let server = try await GatewayProcess.start(
                ["serve"], environment: serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text))
            let pipelined = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n"
                + "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                + "GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n"
            let answers = try await RawClient.converse(port: server.port, [(pipelined, until: #"{"status":"ready"}"#)])
            let text = try #require(answers.first)
            // Each status line, wherever it starts (right after the previous body).
            let statuses = text.components(separatedBy: "HTTP/1.1 ").dropFirst()
                .map { "HTTP/1.1 " + ($0.components(separatedBy: "\r\n").first ?? "") }
            #expect(statuses == ["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found", "HTTP/1.1 400 Bad Request", "HTTP/1.1 200 OK"], "\(text)")
            #expect(await server.stop() == 0)
        }
    }

    /// A client that sends its request and then closes its sending side
    /// still gets the answer; one that closes it mid-request is let go at
    /// once, not after the idle timeout.
    @Test func aHalfClosedConnectionIsAnsweredOrLetGo() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "600"
            let server = try await GatewayProcess.start(["serve"], environment: environment)

            let whole = try await RawClient.connectReading(port: server.port, halfClosing: true)
            try await whole.channel.writeAndFlush(ByteBuffer(string: "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"))
            try await whole.channel.close(mode: .output)
            #expect(await RawClient.closedByTheServer(whole.channel, within: .seconds(30)))
            #expect(whole.received().hasPrefix("HTTP/1.1 200 OK"), "\(whole.received())")

            let partial = try await RawClient.connectReading(port: server.port, halfClosing: true)
            try await partial.channel.writeAndFlush(ByteBuffer(string: "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{"))
            try await partial.channel.close(mode: .output)
            #expect(await RawClient.closedByTheServer(partial.channel, within: .seconds(30)))
            #expect(!partial.received().contains("HTTP/1.1 5"), "\(partial.received())")
            #expect(try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status == 200)
            #expect(await server.stop() == 0)
        }
    }

    /// The resident memory of a process, from /proc.
    private static func residentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
    }
}
