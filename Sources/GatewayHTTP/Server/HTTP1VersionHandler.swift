public import NIOCore
public import NIOHTTP1
import NIOHTTPTypesHTTP1

/// What the request's HTTP version decides and Hummingbird's codec to HTTP
/// types forgets, so it sits in front of that codec (``HTTP1HandlersInstaller``
/// puts it there; one handler a connection):
///
/// - **Persistence** (RFC 9112 §9.3): an HTTP/1.0 connection closes after
///   the response unless the request asked for `keep-alive`. Such a request
///   is passed on with `Connection: close`, which Hummingbird honours;
///   without it, clients that read an HTTP/1.0 answer until the connection
///   closes (THC-Hydra among them) waited for the idle timeout on every request.
/// - **`Expect: 100-continue`** (RFC 9110 §10.1.1) is answered with `100
///   Continue`, so a client that waits for it sends its body at once.
///   Hummingbird leaves the expectation unanswered, and such a client sent its
///   body only after its own timeout (curl: one second a request). An HTTP/1.0
///   request's expectation is ignored, as the RFC requires; so is any other
///   expectation.
///
/// The interim answer goes out when the request head arrives, or, if the
/// client pipelined it behind requests not yet answered, right after the last
/// of those answers, never inside one. A body the route refuses anyway still
/// gets its final answer at once: the routes compare the declared
/// `Content-Length` with their limit before reading (`Request.readBody(upTo:)`).
public final class HTTP1VersionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    /// One entry a request whose final answer is not written yet, oldest
    /// first: whether it still waits for its `100 Continue`.
    private var unanswered = CircularBuffer<Bool>()

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        let isHTTP11OrLater = head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1)
        unanswered.append(isHTTP11OrLater && head.headers["expect"].contains { $0.lowercased() == "100-continue" })
        if unanswered.count == 1 { sendContinueIfAwaited(context: context) }
        // NIO's isKeepAlive reads the version's default and the Connection header's tokens.
        if !isHTTP11OrLater && !head.isKeepAlive {
            head.headers.replaceOrAdd(name: "connection", value: "close")
            return context.fireChannelRead(wrapInboundOut(.head(head)))
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
