import Foundation
import GatewayCore
import NIOCore
import NIOPosix
import NIOSSL

/// One connection to an SMTP server, greeted, secured and authenticated as
/// its ``SMTPSettings`` say (RFC 5321, STARTTLS RFC 3207, implicit TLS RFC
/// 8314, AUTH PLAIN RFC 4616 and LOGIN), used by one message at a time.
/// Commands go one by one (no pipelining), so each reply answers the
/// command before it.
struct SMTPConnection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<SMTPReplyHandler>
    let settings: SMTPSettings

    /// Connects to `address` (the policy's checked one; the settings' host
    /// when it is a literal) and runs the exchange up to a ready session.
    static func open(
        _ settings: SMTPSettings, at address: IPAddress?, tls: NIOSSLContext, within timeout: Duration
    ) async throws(SMTPFailure) -> SMTPConnection {
        let serverName = IPAddress(settings.host) == nil ? settings.host : nil
        let implicitTLS = settings.security == .implicitTLS
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if implicitTLS {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                        }
                        try channel.pipeline.syncOperations.addHandler(SMTPReplyHandler())
                    }
                }
                .connect(host: address?.description ?? settings.host, port: settings.port).get()
        } catch {
            throw SMTPFailure(.noConnection, "no connection to the SMTP server")
        }
        let handler: NIOLoopBound<SMTPReplyHandler>
        do {
            handler = try await channel.eventLoop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: SMTPReplyHandler.self), eventLoop: channel.eventLoop)
            }.get()
        } catch {
            channel.close(promise: nil)
            throw SMTPFailure(.noConnection, "the connection closed at once")
        }
        let connection = SMTPConnection(channel: channel, handler: handler, settings: settings)
        do {
            try await connection.withDeadline(timeout) { () async throws(SMTPFailure) in try await connection.start(tls: tls, serverName: serverName) }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    private func start(tls: NIOSSLContext, serverName: String?) async throws(SMTPFailure) {
        try expect(220, try await reply(), "the greeting")
        var extensions = try await greet()
        if settings.security == .startTLS {
            guard extensions["STARTTLS"] != nil else {
                throw SMTPFailure(.tlsUnavailable, "TLS is required and the server does not offer STARTTLS; nothing was sent")
            }
            try expect(220, try await command("STARTTLS"), "STARTTLS")
            try await beginTLS(tls, serverName: serverName)
            extensions = try await greet()
        }
        if let credentials = settings.credentials { try await authenticate(credentials, offered: extensions["AUTH"]) }
    }

    /// EHLO; the extensions the server lists, by upper-cased keyword.
    private func greet() async throws(SMTPFailure) -> [String: String] {
        let reply = try await command("EHLO \(settings.greetingName)")
        try expect(250, reply, "EHLO")
        var extensions: [String: String] = [:]
        for line in reply.lines.dropFirst() {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard let keyword = parts.first else { continue }
            extensions[keyword.uppercased()] = parts.count > 1 ? String(parts[1]).uppercased() : ""
        }
        return extensions
    }

    /// Adds TLS in front of the reader, unless anything arrived after the
    /// 220: bytes sent before the handshake are injected (RFC 3207 §5).
    private func beginTLS(_ tls: NIOSSLContext, serverName: String?) async throws(SMTPFailure) {
        let (handler, channel) = (handler, channel)
        do {
            try await channel.eventLoop.submit {
                guard !handler.value.holdsAnything else {
                    throw SMTPFailure(.protocolViolation, "the server sent bytes after its answer to STARTTLS")
                }
                try channel.pipeline.syncOperations.addHandler(
                    NIOSSLClientHandler(context: tls, serverHostname: serverName), position: .first)
            }.get()
        } catch let failure as SMTPFailure {
            throw failure
        } catch {
            throw SMTPFailure(.tlsFailed, "TLS could not start: \(error)")
        }
    }

    private func authenticate(_ credentials: SMTPSettings.Credentials, offered: String?) async throws(SMTPFailure) {
        let mechanisms = Set((offered ?? "").split(separator: " ").map(String.init))
        if mechanisms.contains("PLAIN") {
            let token = Data("\u{0}\(credentials.username)\u{0}\(credentials.password)".utf8).base64EncodedString()
            try expect(235, try await command("AUTH PLAIN \(token)"), "AUTH PLAIN")
        } else if mechanisms.contains("LOGIN") {
            try expect(334, try await command("AUTH LOGIN"), "AUTH LOGIN")
            try expect(334, try await command(Data(credentials.username.utf8).base64EncodedString()), "AUTH LOGIN")
            try expect(235, try await command(Data(credentials.password.utf8).base64EncodedString()), "AUTH LOGIN")
        } else {
            throw SMTPFailure(.authUnavailable, "the server offers neither AUTH PLAIN nor AUTH LOGIN; nothing was sent")
        }
    }

    /// Hands one message over; the server's reply to its end of data.
    func send(_ envelope: SMTPEnvelope) async throws(SMTPFailure) -> SMTPReply {
        try expect(250, try await command("MAIL FROM:<\(envelope.sender)>"), "MAIL FROM")
        let recipient = try await command("RCPT TO:<\(envelope.recipient)>")
        guard recipient.code == 250 || recipient.code == 251 else {
            throw SMTPFailure(.refused, "RCPT TO was refused", reply: recipient)
        }
        try expect(354, try await command("DATA"), "DATA")
        write(Self.dataBlock(envelope.message))
        let accepted = try await reply()
        try expect(250, accepted, "the end of data")
        return accepted
    }

    /// RSET, to check that a kept connection still serves before reusing it.
    func reset() async throws(SMTPFailure) {
        try expect(250, try await command("RSET"), "RSET")
    }

    /// QUIT, without waiting for the answer, and close.
    func close() {
        write(ByteBuffer(string: "QUIT\r\n"))
        channel.close(promise: nil)
    }

    /// Runs `body`; once `timeout` has passed, the connection is closed and
    /// whatever waits on the server fails as timed out.
    func withDeadline<Result>(
        _ timeout: Duration, _ body: () async throws(SMTPFailure) -> Result
    ) async throws(SMTPFailure) -> Result {
        let handler = self.handler
        let nanoseconds = Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
            handler.value.end(with: SMTPFailure(.timedOut, "the SMTP exchange took longer than its timeout"))
        }
        defer { deadline.cancel() }
        return try await body()
    }

    /// The message between DATA and its end: lines end in CRLF, a line that
    /// starts with a dot gets another (RFC 5321 §4.5.2), then `.` alone.
    static func dataBlock(_ message: [UInt8]) -> ByteBuffer {
        var out = ByteBuffer()
        out.reserveCapacity(message.count + message.count / 40 + 8)
        var atLineStart = true
        var previous: UInt8 = 0
        for byte in message {
            if byte == UInt8(ascii: "\n"), previous != UInt8(ascii: "\r") { out.writeInteger(UInt8(ascii: "\r")) }
            if atLineStart, byte == UInt8(ascii: ".") { out.writeInteger(UInt8(ascii: ".")) }
            out.writeInteger(byte)
            atLineStart = byte == UInt8(ascii: "\n")
            previous = byte
        }
        if !atLineStart { out.writeString("\r\n") }
        out.writeString(".\r\n")
        return out
    }

    private func command(_ line: String) async throws(SMTPFailure) -> SMTPReply {
        // Every command is made of checked parts; a CR or LF here would be a second command.
        guard !line.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
            throw SMTPFailure(.protocolViolation, "a command with CR, LF or NUL in it was not sent")
        }
        write(ByteBuffer(string: line + "\r\n"))
        return try await reply()
    }

    private func write(_ buffer: ByteBuffer) {
        channel.writeAndFlush(buffer, promise: nil)
    }

    private func reply() async throws(SMTPFailure) -> SMTPReply {
        let (handler, loop) = (handler, channel.eventLoop)
        do {
            return try await loop.flatSubmit { handler.value.nextReply(on: loop) }.get()
        } catch let failure as SMTPFailure {
            throw failure
        } catch {
            throw SMTPFailure(.noConnection, "the connection failed")
        }
    }

    private func expect(_ code: Int, _ reply: SMTPReply, _ step: String) throws(SMTPFailure) {
        guard reply.code == code else { throw SMTPFailure(.refused, "\(step) was refused", reply: reply) }
    }
}
