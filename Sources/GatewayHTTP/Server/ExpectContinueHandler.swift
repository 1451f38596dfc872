public import NIOCore
public import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Answers `Expect: 100-continue` (RFC 9110 §10.1.1) with `100 Continue`, so
/// a client that waits for it sends its body at once. Hummingbird leaves the
/// expectation unanswered, and such a client sent its body only after its own
/// timeout (curl: one second a request). An HTTP/1.0 request's expectation is
/// ignored, as the RFC requires; so is any other expectation.
///
/// The interim answer goes out when the request head arrives, or, if the
/// client pipelined it behind requests not yet answered, right after the last
/// of those answers, never inside one. A body the route refuses anyway still
/// gets its final answer at once: the routes compare the declared
/// `Content-Length` with their limit before reading (`Request.readBody(upTo:)`).
///
/// It works on HTTP/1 parts, which carry the request's version, so it sits
/// in front of Hummingbird's codec to HTTP types; ``ExpectContinueInstaller``
/// puts it there. One handler a connection.
public final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    /// One entry a request whose final answer is not written yet, oldest
    /// first: whether it still waits for its `100 Continue`.
    private var unanswered = CircularBuffer<Bool>()

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            let isHTTP11OrLater = head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1)
            unanswered.append(isHTTP11OrLater && head.headers["expect"].contains { $0.lowercased() == "100-continue" })
            if unanswered.count == 1 { sendContinueIfAwaited(context: context) }
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        context.write(data, promise: promise)
        if case .end = part, !unanswered.isEmpty {
            unanswered.removeFirst()
            sendContinueIfAwaited(context: context)
        }
    }

    /// Sends `100 Continue` when the oldest unanswered request awaits it.
    private func sendContinueIfAwaited(context: ChannelHandlerContext) {
        guard unanswered.first == true else { return }
        unanswered[unanswered.startIndex] = false
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
    }
}

/// What Hummingbird's `additionalChannelHandlers` can hold: they go after its
/// codec from HTTP/1 parts to HTTP types, where a request's version is gone.
/// When added, this puts an ``ExpectContinueHandler`` in front of that codec
/// and removes itself.
public final class ExpectContinueInstaller: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = NIOAny

    public init() {}

    public func handlerAdded(context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        do {
            let codec = try pipeline.handler(type: HTTP1ToHTTPServerCodec.self)
            try pipeline.addHandler(ExpectContinueHandler(), position: .before(codec))
        } catch {
            context.fireErrorCaught(error)
        }
        pipeline.removeHandler(context: context, promise: nil)
    }
}
