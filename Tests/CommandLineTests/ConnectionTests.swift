import Foundation
import GatewayCore
import GatewayTestSupport
import NIOCore
import NIOPosix
import Testing

/// Clients that misuse their connection: a connection that sends nothing, or
/// never finishes its request head (slowloris), is closed after
/// `http.idle_timeout_seconds`; a body cut off by the client is its doing.
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
