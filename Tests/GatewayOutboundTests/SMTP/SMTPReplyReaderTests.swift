import NIOCore
import Testing

@testable import GatewayOutbound

/// The client reads replies strictly and writes DATA as RFC 5321 asks.
@Suite struct SMTPReplyReaderTests {
    @Test func aMultiLineReplyIsOneReplyAndBytesMayArriveInAnyPieces() throws {
        let bytes = Array("250-mail.example Hello\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n220 ready\r\n".utf8)
        for cut in 1..<bytes.count {
            var reader = SMTPReplyReader()
            let replies = try reader.read(bytes[..<cut]) + reader.read(bytes[cut...])
            #expect(replies == [
                SMTPReply(code: 250, lines: ["mail.example Hello", "STARTTLS", "AUTH PLAIN LOGIN"]), SMTPReply(code: 220, lines: ["ready"]),
            ])
            #expect(!reader.holdsAnything)
        }
    }

    @Test(arguments: [
        "250 ok\n", "25 short\r\n", "abc no code\r\n", "250-one\r\n251 two\r\n", "250_x\r\n", "199 too low\r\n", "250 \u{1b}[31m\r\n",
        "250 caf\u{e9}\r\n", "250 " + String(repeating: "x", count: 3000) + "\r\n",
        String(repeating: "250-x\r\n", count: 70) + "250 end\r\n",
    ])
    func anythingElseIsAProtocolFailure(_ text: String) {
        var reader = SMTPReplyReader()
        #expect(throws: SMTPReplyReader.Malformed.self) { _ = try reader.read(Array(text.utf8)) }
    }

    @Test func anUnfinishedReplyIsHeld() throws {
        var reader = SMTPReplyReader()
        #expect(try reader.read(Array("220 go ahead\r\n250-inj".utf8)) == [SMTPReply(code: 220, lines: ["go ahead"])])
        #expect(reader.holdsAnything)
    }

    @Test func dataIsDotStuffedWithCRLFLinesAndEndsInALoneDot() {
        let block = SMTPConnection.dataBlock(Array("a\n.b\r\n..\r\nc".utf8))
        #expect(String(buffer: block) == "a\r\n..b\r\n...\r\nc\r\n.\r\n")
    }

    @Test func failuresSayWhetherToTryAgain() {
        #expect(SMTPFailure(.refused, "x", reply: SMTPReply(code: 451, lines: ["later"])).isTransient)
        #expect(!SMTPFailure(.refused, "x", reply: SMTPReply(code: 550, lines: ["never"])).isTransient)
        #expect(SMTPFailure(.timedOut, "x").isTransient)
        #expect(!SMTPFailure(.tlsUnavailable, "x").isTransient)
        #expect(!SMTPFailure(.addressRefused, "x").isTransient)
    }
}

/// The client's own address rules, asked when a message goes out (a name
/// that resolves to this network, say), not only when options are read.
@Suite struct SMTPClientAddressTests {
    static let envelope = SMTPEnvelope(sender: "a@example.com", recipient: "b@example.com", message: Array("x\r\n".utf8))

    @Test(arguments: [("localhost", 587), ("127.0.0.1", 25), ("smtp.example.net", 5432)])
    func aPrivateAddressOrAnotherServicesPortGetsNothing(_ host: String, _ port: Int) async throws {
        let client = try SMTPClient(addresses: OutboundAddressPolicy(allowsPrivateAddresses: false))
        let settings = SMTPSettings(host: host, port: port, security: .startTLS, credentials: nil, greetingName: "example.com")
        guard case .failure(let failure) = await client.send(Self.envelope, with: settings, for: "app") else {
            Issue.record("delivered")
            return
        }
        #expect(failure.kind == .addressRefused, "\(failure)")
        #expect(!failure.isTransient)
    }
}
