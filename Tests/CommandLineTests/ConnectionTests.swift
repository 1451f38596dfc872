import Foundation
import GatewayCore
import GatewayTestSupport
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization
import Testing

/// Clients that misuse their connection: a connection that sends nothing, or
/// never finishes its request head (slowloris), is closed after
/// `http.idle_timeout_seconds`; a body trickled under
/// `http.min_body_bytes_per_second` is cut; a body cut off by the client is its doing.
@Suite struct ConnectionTests {
    @Test func silentAndTricklingConnectionsAreClosedAfterTheIdleTimeout() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "1"
            let server = try await GatewayProcess.start(["serve"], environment: environment)

            let silent = try await Self.connect(port: server.port)
            let trickling = try await Self.connect(port: server.port)
            // A head that never ends. On a loaded machine the gateway may close first; that is the outcome sought.
            try? await trickling.writeAndFlush(ByteBuffer(string: "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nX-A: "))

            #expect(await Self.closedByTheServer(silent, within: .seconds(30)))
            #expect(await Self.closedByTheServer(trickling, within: .seconds(30)))
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
            var environment = ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "600"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let oneShot = try await Self.connect(port: server.port)
            try await oneShot.writeAndFlush(ByteBuffer(string: "GET /healthz HTTP/1.0\r\n\r\n"))
            #expect(await Self.closedByTheServer(oneShot, within: .seconds(30)))
            // Asked to keep it, it stays open for the next request.
            let answers = try await Self.converse(
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
            var environment = ResilienceTests.environment(url, bootstrap: bootstrap)
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
                let channel = try await Self.connectWithoutReading(port: server.port)
                try await channel.writeAndFlush(ByteBuffer(string: request))
                stalled.append(channel)
            }
            for channel in stalled { #expect(try await Self.firstBytes(of: channel).hasPrefix("HTTP/1.1 200")) }
            // Every export is stuck on a full socket; the pool is free for logins.
            for _ in 0..<5 { #expect(try await ResilienceTests.attempt(base, appID, password: "right") == 200) }
            let fifth = try await Self.connectWithoutReading(port: server.port)
            try await fifth.writeAndFlush(ByteBuffer(string: request))
            #expect(try await Self.firstBytes(of: fifth).hasPrefix("HTTP/1.1 503"))
            stalled.append(fifth)
            for channel in stalled { try? await channel.close() }
            #expect(await server.stop() == 0)
        }
    }

    /// A client hanging up in the middle of its body gets a 400 in the access
    /// log, never an "unexpected error" line.
    @Test func aBodyCutOffByTheClientIsA400NotAnError() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let environment = ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text)
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let channel = try await Self.connect(port: server.port)
            try await channel.writeAndFlush(ByteBuffer(string:
                "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"app_id\":"))
            try await channel.close(mode: .output)
            // The gateway closes its side once it has seen the end and answered.
            #expect(await Self.closedByTheServer(channel, within: .seconds(30)))
            #expect(await server.stop() == 0)
            let log = server.printed
            #expect(log.contains(#""route":"POST /v1/identity_tokens","status":"400""#), "\(log)")
            #expect(!log.contains("unexpected error"), "\(log)")
        }
    }

    /// A client waiting on `Expect: 100-continue` is told to go on before it
    /// sends its body, and a body declared over the limit is refused before
    /// any of it is sent, on the same connection.
    @Test func continueIsAnsweredAndAnOversizedBodyIsRefusedBeforeItIsSent() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let environment = ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text)
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let body = #"{"app_id":"\#(UUID())","user_id":"alice","nonce":"n"}"#
            let head = "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            let answers = try await Self.converse(port: server.port, [
                (head + "Expect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n", until: "\r\n\r\n"),
                (body, until: "}"),
                // No length declared: refused once 64 KiB are read.
                (head + "Transfer-Encoding: chunked\r\n\r\n11170\r\n" + String(repeating: "a", count: 0x11170)
                    + "\r\n0\r\n\r\n", until: "}"),
                (head + "Content-Length: 10000000\r\n\r\n", until: "}"),
            ])
            #expect(answers.count == 4, "\(answers)")
            #expect(answers.first == "HTTP/1.1 100 Continue\r\n\r\n")
            // The body was read: its app id is the one named unknown.
            if answers.count > 1 {
                #expect(answers[1].hasPrefix("HTTP/1.1 404 "), "\(answers[1])")
                #expect(answers[1].contains(#""error":"unknown_app""#), "\(answers[1])")
            }
            for answer in answers.dropFirst(2) {
                #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer)")
                #expect(answer.contains("exceeds the size limit of 65536 bytes."), "\(answer)")
            }
            // HTTP/1.0 knows no interim answers: its expectation is ignored (RFC 9110 §10.1.1), so the
            // first thing back, with head and body sent at once, is the final answer.
            let old = try await Self.converse(port: server.port, [
                ("POST /v1/identity_tokens HTTP/1.0\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n" + body, until: "}")
            ])
            #expect(old.count == 1)
            #expect(old.first.map { !$0.contains("100 Continue") && $0.contains(#""error":"unknown_app""#) } == true, "\(old)")
            #expect(await server.stop() == 0)
        }
    }

    /// Hundreds of connections that open and say nothing: others are served
    /// meanwhile, the server closes every one within the idle timeout, and
    /// its memory grows by less than 64 MiB for them.
    @Test func manyIdleConnectionsAreFreedAndDoNotStopOthers() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "3"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let before = try Self.residentBytes(of: server.pid)
            var idle: [any Channel] = []
            for _ in 0..<400 { idle.append(try await Self.connect(port: server.port)) }
            #expect(try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/readyz").status == 200)
            let during = try Self.residentBytes(of: server.pid)
            #expect(during - before < 64 << 20, "\((during - before) >> 20) MiB for 400 idle connections")
            var closed = 0
            for channel in idle where await Self.closedByTheServer(channel, within: .seconds(60)) { closed += 1 }
            #expect(closed == idle.count)
            #expect(try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status == 200)
            #expect(await server.stop() == 0)
        }
    }

    /// Requests sent back to back in one write are each answered, in order.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let server = try await GatewayProcess.start(
                ["serve"], environment: ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text))
            let pipelined = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n"
                + "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                + "GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n"
            let answers = try await Self.converse(port: server.port, [(pipelined, until: #"{"status":"ready"}"#)])
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
            var environment = ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "600"
            let server = try await GatewayProcess.start(["serve"], environment: environment)

            let whole = try await Self.connectReading(port: server.port, halfClosing: true)
            try await whole.channel.writeAndFlush(ByteBuffer(string: "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"))
            try await whole.channel.close(mode: .output)
            #expect(await Self.closedByTheServer(whole.channel, within: .seconds(30)))
            #expect(whole.received().hasPrefix("HTTP/1.1 200 OK"), "\(whole.received())")

            let partial = try await Self.connectReading(port: server.port, halfClosing: true)
            try await partial.channel.writeAndFlush(ByteBuffer(string: "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n{"))
            try await partial.channel.close(mode: .output)
            #expect(await Self.closedByTheServer(partial.channel, within: .seconds(30)))
            #expect(!partial.received().contains("HTTP/1.1 5"), "\(partial.received())")
            #expect(try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status == 200)
            #expect(await server.stop() == 0)
        }
    }

    /// A 64 KiB user import written one byte a write is read whole. The
    /// body-rate floor is off here: awaiting each one-byte write, this client
    /// sends under 240 bytes a second when the whole suite shares two cores,
    /// and the floor would rightly cut it.
    @Test func aBodySentOneByteAtATimeIsReadWhole() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            var environment = ResilienceTests.environment(url, bootstrap: bootstrap)
            environment["GATEWAY_HTTP_MIN_BODY_BYTES_PER_SECOND"] = "0"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let base = "http://127.0.0.1:\(server.port)"
            let appID = UUID().lowercasedText
            let created = try await HTTPCall.send(
                "POST", "\(base)/admin/v1/apps", token: bootstrap,
                json: [
                    "app_id": appID, "name": "bytes", "environment": "development", "provider_id": UUID().uuidString,
                    "credential_types": ["password"],
                ])
            #expect(created.status == 201, "\(created.text)")
            let hash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG"
            var body = ""
            var users = 0
            while body.utf8.count < 65_536 - 200 {
                body += #"{"user_id":"user-\#(users)","password_hash":"\#(hash)"}"# + "\n"
                users += 1
            }
            body += String(repeating: " ", count: 65_535 - body.utf8.count) + "\n"
            #expect(body.utf8.count == 65_536)
            let head = "POST /admin/v1/apps/\(appID)/users:import HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer \(bootstrap)\r\n"
                + "Content-Type: application/x-ndjson\r\nContent-Length: 65536\r\nConnection: close\r\n\r\n"
            let connection = try await Self.connectReading(port: server.port, noDelay: true)
            try await connection.channel.writeAndFlush(ByteBuffer(string: head))
            for byte in body.utf8 { try await connection.channel.writeAndFlush(ByteBuffer(bytes: [byte])) }
            #expect(await Self.closedByTheServer(connection.channel, within: .seconds(60)))
            let answer = connection.received()
            #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer.prefix(300))")
            #expect(answer.contains(#""created":\#(users)"#) && answer.contains(#""failed":0"#), "\(answer.suffix(300))")
            #expect(await server.stop() == 0)
        }
    }

    /// A body trickled slower than `http.min_body_bytes_per_second` is cut
    /// once the grace is over, however long the idle timeout: each byte
    /// restarts the idle timer, so that alone never would.
    @Test func aBodyTrickledBelowTheMinimumRateIsCut() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            var environment = ResilienceTests.environment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "600"
            environment["GATEWAY_HTTP_MIN_BODY_BYTES_PER_SECOND"] = "100"
            environment["GATEWAY_HTTP_MIN_BODY_RATE_GRACE_SECONDS"] = "1"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let trickling = try await Self.connect(port: server.port)
            try await trickling.writeAndFlush(ByteBuffer(
                string: "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
            // The client's own pace, four bytes a second, until the server closes.
            let trickle = Task {
                while !Task.isCancelled, (try? await trickling.writeAndFlush(ByteBuffer(string: " "))) != nil {
                    try? await Task.sleep(for: .milliseconds(250))
                }
            }
            #expect(await Self.closedByTheServer(trickling, within: .seconds(30)))
            trickle.cancel()
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

    /// A connection that keeps everything it receives, for a client that
    /// half-closes or writes byte by byte and reads the answer afterwards.
    private struct ReadingConnection {
        let channel: any Channel
        let collector: Collector
        func received() -> String { collector.text.withLock { $0 } }
    }

    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let text = Mutex("")

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let chunk = String(buffer: unwrapInboundIn(data))
            text.withLock { $0 += chunk }
        }
    }

    /// With `halfClosing`, the connection stays open for reading after the client closes its sending side.
    private static func connectReading(port: Int, halfClosing: Bool = false, noDelay: Bool = false) async throws
        -> ReadingConnection
    {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: halfClosing)
            .channelOption(.socketOption(.tcp_nodelay), value: noDelay ? 1 : 0)
            .channelInitializer { $0.pipeline.addHandler(collector) }
            .connect(host: "127.0.0.1", port: port).get()
        return ReadingConnection(channel: channel, collector: collector)
    }

    /// Talks HTTP by hand on one connection: each step sends its text, then
    /// reads until what came back ends with `until`. Returns the answers read
    /// before the connection closed; none if `limit` passed first (a bound for
    /// a failing test only).
    private static func converse(
        port: Int, _ steps: [(send: String, until: String)], within limit: Duration = .seconds(30)
    ) async throws -> [String] {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(
            host: "127.0.0.1", port: port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        return await withTaskGroup(of: [String]?.self) { group in
            group.addTask {
                try? await channel.executeThenClose { inbound, outbound in
                    var iterator = inbound.makeAsyncIterator()
                    var answers: [String] = []
                    for step in steps {
                        try await outbound.write(ByteBuffer(string: step.send))
                        var text = ""
                        while !text.hasSuffix(step.until) {
                            guard let chunk = try await iterator.next() else { return answers }
                            text += String(buffer: chunk)
                        }
                        answers.append(text)
                    }
                    return answers
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            channel.channel.close(promise: nil)
            return first ?? []
        }
    }

    /// A connection that reads only when ``firstBytes(of:)`` asks it to, once.
    private static func connectWithoutReading(port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .channelInitializer { $0.pipeline.addHandler(FirstBytes()) }
            .connect(host: "127.0.0.1", port: port).get()
    }

    /// Reads once from a ``connectWithoutReading(port:)`` channel; what arrived, as text.
    private static func firstBytes(of channel: any Channel) async throws -> String {
        let handler = try await channel.pipeline.handler(type: FirstBytes.self).get()
        let promise = channel.eventLoop.makePromise(of: String.self)
        channel.eventLoop.execute {
            handler.promise = promise
            channel.read()
        }
        return try await promise.futureResult.get()
    }

    private final class FirstBytes: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        /// Touched on the channel's event loop only.
        var promise: EventLoopPromise<String>?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            promise?.succeed(String(buffer: unwrapInboundIn(data)))
            promise = nil
        }
    }

    private static func connect(port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
    }

    /// Whether the server closed `channel` before `limit` passed (the limit
    /// only bounds a failing test); the channel is closed either way.
    private static func closedByTheServer(_ channel: any Channel, within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await channel.closeFuture.get()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            channel.close(promise: nil)
            group.cancelAll()
            return first
        }
    }
}
