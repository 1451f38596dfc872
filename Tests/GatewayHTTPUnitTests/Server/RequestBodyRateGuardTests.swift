import GatewayHTTP
import GatewayPluginKit
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The minimum body rate, on an embedded channel with virtual time: only
/// time the server spends waiting for the client's bytes counts.
@Suite struct RequestBodyRateGuardTests {
    /// 100 bytes a second after 2 seconds of waiting.
    private static let rule = RequestBodyRateGuard.Rule(bytesPerSecond: 100, grace: .seconds(2))

    private static func channelWithHead() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: RequestBodyRateGuard(rule: rule))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/")))
        return channel
    }

    /// Asks for bytes as a reading server does, and lets `seconds` pass.
    private static func wait(_ channel: EmbeddedChannel, seconds: Int64) {
        channel.pipeline.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(seconds))
    }

    private static func send(_ channel: EmbeddedChannel, bytes: Int) throws {
        try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(repeating: 0x61, count: bytes)))
    }

    @Test func aTrickledBodyIsCutOnceTheGraceIsOver() throws {
        let channel = try Self.channelWithHead()
        for _ in 0..<2 {
            Self.wait(channel, seconds: 1)
            try Self.send(channel, bytes: 1)
        }
        #expect(channel.isActive)  // within the grace
        Self.wait(channel, seconds: 1)
        #expect(!channel.isActive)  // 2 bytes in 3 s of waiting, 300 were due
    }

    @Test func aBodyOverTheRateIsNotCut() throws {
        let channel = try Self.channelWithHead()
        for _ in 0..<10 {
            Self.wait(channel, seconds: 1)
            try Self.send(channel, bytes: 150)
        }
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        Self.wait(channel, seconds: 30)  // after the end, a keep-alive wait is not a slow body
        #expect(channel.isActive)
        _ = try channel.finish()
    }

    /// The check belongs to the connection: it keeps running from one
    /// keep-alive request into the next, and stops at a tick with no body
    /// on its way. A trickled body is cut either way: one that follows a
    /// request at once, and one that comes after the check had stopped.
    @Test func aLaterRequestOnTheConnectionIsCheckedWhetherTheCheckRanOnOrHadStopped() throws {
        let head = HTTPServerRequestPart.head(HTTPRequestHead(version: .http1_1, method: .POST, uri: "/"))
        for pauseBetween: Int64 in [0, 10] {
            let channel = try Self.channelWithHead()
            for _ in 0..<50 {
                try Self.send(channel, bytes: 10)
                try channel.writeInbound(HTTPServerRequestPart.end(nil))
                try channel.writeInbound(head)
            }
            try channel.writeInbound(HTTPServerRequestPart.end(nil))
            Self.wait(channel, seconds: pauseBetween)  // 10 s: ticks find no body, and the check stops
            #expect(channel.isActive)
            try channel.writeInbound(head)
            Self.wait(channel, seconds: 2)
            #expect(channel.isActive)  // within the grace
            Self.wait(channel, seconds: 1)
            #expect(!channel.isActive, "a trickled body after a pause of \(pauseBetween) s was not cut")
        }
    }

    /// A route busy with the bytes it has (an import writing a batch) asks
    /// for no more: that time is the server's, and never cuts the client.
    @Test func timeTheServerIsNotReadingDoesNotCount() throws {
        let channel = try Self.channelWithHead()
        Self.wait(channel, seconds: 1)
        try Self.send(channel, bytes: 100)
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))  // no read asked
        #expect(channel.isActive)
        Self.wait(channel, seconds: 1)
        try Self.send(channel, bytes: 100)
        #expect(channel.isActive)
        Self.wait(channel, seconds: 2)  // 200 bytes in 4 s of waiting, 400 were due
        #expect(!channel.isActive)
    }
}
