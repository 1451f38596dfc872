import HTTPTypes
public import NIOCore
public import NIOHTTPTypes

/// Answers `Expect: 100-continue` (RFC 9110 §10.1.1) with `100 Continue`, so
/// a client that waits for it sends its body at once. Hummingbird leaves the
/// expectation unanswered, and such a client sent its body only after its own
/// timeout (curl: one second a request).
///
/// The interim answer goes out when the request head arrives, or, if the
/// client pipelined it behind requests not yet answered, right after the last
/// of those answers, never inside one. A body the route refuses anyway still
/// gets its final answer at once: the routes compare the declared
/// `Content-Length` with their limit before reading (`Request.readBody(upTo:)`).
/// One handler a connection.
public final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    /// One entry a request whose final answer is not written yet, oldest
    /// first: whether it still waits for its `100 Continue`.
    private var unanswered = CircularBuffer<Bool>()

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data) {
            unanswered.append(request.headerFields[values: .expect].contains { $0.lowercased() == "100-continue" })
            if unanswered.count == 1 { sendContinueIfAwaited(context: context) }
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        if case .end = unwrapOutboundIn(data), !unanswered.isEmpty {
            unanswered.removeFirst()
            sendContinueIfAwaited(context: context)
        }
    }

    /// Sends `100 Continue` when the oldest unanswered request awaits it.
    private func sendContinueIfAwaited(context: ChannelHandlerContext) {
        guard unanswered.first == true else { return }
        unanswered[unanswered.startIndex] = false
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
    }
}
