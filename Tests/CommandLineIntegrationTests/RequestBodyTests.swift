import Foundation
import GatewayCore
import GatewayTestSupport
import NIOCore
import NIOPosix
import Testing

/// Request bodies from clients that misbehave: cut off, announced over the
/// limit, sent a byte a write, or trickled under `http.min_body_bytes_per_second`.
@Suite struct RequestBodyTests {
    /// A client hanging up in the middle of its body gets a 400 in the access
    /// log, never an "unexpected error" line.
    @Test func aBodyCutOffByTheClientIsA400NotAnError() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let environment = Self.withoutBodyRateFloor(serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text))
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let channel = try await RawClient.connect(port: server.port)
            try await channel.writeAndFlush(ByteBuffer(string:
                "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"app_id\":"))
            try await channel.close(mode: .output)
            // The gateway closes its side once it has seen the end and answered.
            #expect(await RawClient.closedByTheServer(channel, within: .seconds(30)))
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
            let environment = Self.withoutBodyRateFloor(serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text))
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let body = #"{"app_id":"\#(UUID())","user_id":"alice","nonce":"n"}"#
            let head = "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n"
            let answers = try await RawClient.converse(port: server.port, [
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
            let old = try await RawClient.converse(port: server.port, [
                ("POST /v1/identity_tokens HTTP/1.0\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n" + body, until: "}")
            ])
            #expect(old.count == 1)
            #expect(old.first.map { !$0.contains("100 Continue") && $0.contains(#""error":"unknown_app""#) } == true, "\(old)")
            #expect(await server.stop() == 0)
        }
    }

    /// `environment` with the body-rate floor off, for tests of something
    /// else: with the whole suite on two cores, this test process once took
    /// over the floor's 5 s grace to send a 60-byte body after its
    /// `100 Continue`, and the gateway rightly cut it (the floor has tests
    /// of its own below).
    static func withoutBodyRateFloor(_ environment: [String: String]) -> [String: String] {
        environment.merging(["GATEWAY_HTTP_MIN_BODY_BYTES_PER_SECOND": "0"]) { $1 }
    }

    /// A 64 KiB user import written one byte a write is read whole. The
    /// body-rate floor is off here: awaiting each one-byte write, this client
    /// sends under 240 bytes a second when the whole suite shares two cores,
    /// and the floor would rightly cut it.
    @Test func aBodySentOneByteAtATimeIsReadWhole() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            let environment = Self.withoutBodyRateFloor(serveEnvironment(url, bootstrap: bootstrap))
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
            let connection = try await RawClient.connectReading(port: server.port, noDelay: true)
            try await connection.channel.writeAndFlush(ByteBuffer(string: head))
            for byte in body.utf8 { try await connection.channel.writeAndFlush(ByteBuffer(bytes: [byte])) }
            #expect(await RawClient.closedByTheServer(connection.channel, within: .seconds(60)))
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
            var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
            environment["GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS"] = "600"
            environment["GATEWAY_HTTP_MIN_BODY_BYTES_PER_SECOND"] = "100"
            environment["GATEWAY_HTTP_MIN_BODY_RATE_GRACE_SECONDS"] = "1"
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            let trickling = try await RawClient.connect(port: server.port)
            try await trickling.writeAndFlush(ByteBuffer(
                string: "POST /v1/identity_tokens HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
            // The client's own pace, four bytes a second, until the server closes.
            let trickle = Task {
                while !Task.isCancelled, (try? await trickling.writeAndFlush(ByteBuffer(string: " "))) != nil {
                    try? await Task.sleep(for: .milliseconds(250))
                }
            }
            #expect(await RawClient.closedByTheServer(trickling, within: .seconds(30)))
            trickle.cancel()
            #expect(try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status == 200)
            #expect(await server.stop() == 0)
        }
    }
}
