import GatewayHTTP
import GatewayPluginKit
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import Testing

/// `Expect: 100-continue` and HTTP/1.0 persistence on one connection, as the pipeline sees it.
@Suite struct HTTP1VersionHandlerTests {
    private static func head(
        expecting expectation: String? = "100-continue", version: HTTPVersion = .http1_1
    ) -> HTTPServerRequestPart {
        var head = HTTPRequestHead(version: version, method: .POST, uri: "/v1/identity_tokens")
        if let expectation { head.headers.add(name: "Expect", value: expectation) }
        return .head(head)
    }

    /// The status of each response head written out.
    private static func written(_ channel: EmbeddedChannel) throws -> [UInt] {
        var statuses: [UInt] = []
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            if case .head(let response) = part { statuses.append(response.status.code) }
        }
        return statuses
    }

    private static func answer(_ status: HTTPResponseStatus, on channel: EmbeddedChannel) throws {
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
    }

    @Test(arguments: ["100-continue", "100-Continue"])
    func theExpectationIsAnsweredWhenTheHeadArrives(expectation: String) throws {
        let channel = EmbeddedChannel(handler: HTTP1VersionHandler())
        try channel.writeInbound(Self.head(expecting: expectation))
        #expect(try Self.written(channel) == [100])
        // The head still reaches the router.
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) != nil)
    }

    @Test(arguments: [nil, "something-else"] as [String?])
    func noExpectationNoContinue(expectation: String?) throws {
        let channel = EmbeddedChannel(handler: HTTP1VersionHandler())
        try channel.writeInbound(Self.head(expecting: expectation))
        #expect(try Self.written(channel) == [])
    }

    /// RFC 9110 §10.1.1: an HTTP/1.0 request's expectation is ignored.
    @Test func anHTTP10RequestGetsNoContinue() throws {
        let channel = EmbeddedChannel(handler: HTTP1VersionHandler())
        try channel.writeInbound(Self.head(version: .http1_0))
        #expect(try Self.written(channel) == [])
        try Self.answer(.ok, on: channel)
        try channel.writeInbound(Self.head())
        #expect(try Self.written(channel) == [200, 100])
    }

    /// RFC 9112 §9.3: HTTP/1.0 closes after the response unless the request asks for keep-alive.
    @Test(arguments: [
        (HTTPVersion.http1_0, nil, "close"), (.http1_0, "keep-alive", "keep-alive"), (.http1_0, "Keep-Alive", "Keep-Alive"),
        (.http1_1, nil, nil), (.http1_1, "close", "close"),
    ] as [(HTTPVersion, String?, String?)])
    func anHTTP10RequestClosesItsConnectionUnlessItAsksToKeepIt(
        version: HTTPVersion, connection: String?, passedOn: String?
    ) throws {
        let channel = EmbeddedChannel(handler: HTTP1VersionHandler())
        var head = HTTPRequestHead(version: version, method: .POST, uri: "/identity_tokens")
        if let connection { head.headers.add(name: "Connection", value: connection) }
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        guard case .head(let received) = try #require(try channel.readInbound(as: HTTPServerRequestPart.self)) else {
            Issue.record("the head did not reach the router")
            return
        }
        #expect(received.headers["connection"].first == passedOn)
    }

    /// A request pipelined behind one still being answered gets its 100 only
    /// after that answer's end, never in the middle of it.
    @Test func aPipelinedRequestWaitsForTheAnswerBeforeIt() throws {
        let channel = EmbeddedChannel(handler: HTTP1VersionHandler())
        try channel.writeInbound(Self.head(expecting: nil))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        try channel.writeInbound(Self.head())
        #expect(try Self.written(channel) == [])

        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "{}"))))
        #expect(try Self.written(channel) == [200])
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        #expect(try Self.written(channel) == [100])
    }

    /// An answer written before the body (a 413 from `Content-Length`) ends
    /// the request's turn; the next one is answered normally.
    @Test func eachRequestGetsItsOwnContinue() throws {
        let channel = EmbeddedChannel(handler: HTTP1VersionHandler())
        try channel.writeInbound(Self.head())
        try Self.answer(.payloadTooLarge, on: channel)
        try channel.writeInbound(Self.head())
        #expect(try Self.written(channel) == [100, 413, 100])
    }

    /// The installer, added after the codec as Hummingbird adds extra
    /// handlers, leaves the handlers in front of the codec and itself nowhere.
    @Test func theInstallerPutsTheHandlersInFrontOfTheCodec() throws {
        let channel = EmbeddedChannel()
        let codec = HTTP1ToHTTPServerCodec(secure: false)
        try channel.pipeline.syncOperations.addHandler(codec)
        try channel.pipeline.syncOperations.addHandler(HTTP1HandlersInstaller(bodyRate: .init()))
        _ = try channel.pipeline.syncOperations.handler(type: HTTP1VersionHandler.self)
        _ = try channel.pipeline.syncOperations.handler(type: RequestBodyRateGuard.self)
        #expect(throws: ChannelPipelineError.self) {
            try channel.pipeline.syncOperations.handler(type: HTTP1HandlersInstaller.self)
        }
        // An HTTP/1 head meets the handler first, then the codec turns it into HTTP types.
        try channel.writeInbound(Self.head())
        #expect(try Self.written(channel) == [100])
        #expect(try channel.readInbound(as: HTTPRequestPart.self) != nil)
    }
}
