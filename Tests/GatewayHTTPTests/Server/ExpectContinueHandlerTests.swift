import GatewayHTTP
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing

/// `Expect: 100-continue` on one connection, as the pipeline sees it.
@Suite struct ExpectContinueHandlerTests {
    private static func head(expecting expectation: String? = "100-continue") -> HTTPRequestPart {
        var request = HTTPRequest(method: .post, scheme: "http", authority: "a", path: "/v1/identity_tokens")
        if let expectation { request.headerFields[.expect] = expectation }
        return .head(request)
    }

    /// The status of each response head the handler itself wrote.
    private static func written(_ channel: EmbeddedChannel) throws -> [Int] {
        var statuses: [Int] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
            if case .head(let response) = part { statuses.append(response.status.code) }
        }
        return statuses
    }

    @Test(arguments: ["100-continue", "100-Continue"])
    func theExpectationIsAnsweredWhenTheHeadArrives(expectation: String) throws {
        let channel = EmbeddedChannel(handler: ExpectContinueHandler())
        try channel.writeInbound(Self.head(expecting: expectation))
        #expect(try Self.written(channel) == [100])
        // The head still reaches the router.
        #expect(try channel.readInbound(as: HTTPRequestPart.self) != nil)
    }

    @Test(arguments: [nil, "something-else"] as [String?])
    func noExpectationNoContinue(expectation: String?) throws {
        let channel = EmbeddedChannel(handler: ExpectContinueHandler())
        try channel.writeInbound(Self.head(expecting: expectation))
        #expect(try Self.written(channel) == [])
    }

    /// A request pipelined behind one still being answered gets its 100 only
    /// after that answer's end, never in the middle of it.
    @Test func aPipelinedRequestWaitsForTheAnswerBeforeIt() throws {
        let channel = EmbeddedChannel(handler: ExpectContinueHandler())
        try channel.writeInbound(Self.head(expecting: nil))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        try channel.writeInbound(Self.head())
        #expect(try Self.written(channel) == [])

        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(string: "{}")))
        #expect(try Self.written(channel) == [200])
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(try Self.written(channel) == [100])
    }

    /// An answer written before the body (a 413 from `Content-Length`) ends
    /// the request's turn; the next one is answered normally.
    @Test func eachRequestGetsItsOwnContinue() throws {
        let channel = EmbeddedChannel(handler: ExpectContinueHandler())
        try channel.writeInbound(Self.head())
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .contentTooLarge)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        try channel.writeInbound(Self.head())
        #expect(try Self.written(channel) == [100, 413, 100])
    }
}
