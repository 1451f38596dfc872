import CoreMetrics
public import NIOCore
public import NIOHTTP1

/// Closes a connection whose request body arrives slower than a minimum
/// rate, the defence against a body trickled a byte at a time (the idle
/// timeout alone restarts with each byte, so 64 KiB at one byte a minute
/// would hold a connection and its request for weeks).
///
/// Only time spent waiting on the client counts: from the moment the server
/// asks for more bytes until bytes arrive. While a route is busy with what
/// it has (an import writing a batch) and reads nothing, the clock stops,
/// so a slow database never gets a fast client cut off. After `grace` of
/// such waiting, the body so far must have come at `bytesPerSecond` on
/// average over that waiting time; checked once a second.
///
/// The check is a timer of the connection's, not of each request: started
/// by a request's head, it keeps running through the requests that follow
/// on the same connection and stops at the first tick that finds no body
/// on its way. Keep-alive requests one after another schedule and cancel
/// no timer each (that was an eighth of a token's reference counting).
///
/// It sits with ``HTTP1VersionHandler`` in front of Hummingbird's codec,
/// where request parts still carry their HTTP/1 framing.
public final class RequestBodyRateGuard: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPServerRequestPart
    public typealias InboundOut = HTTPServerRequestPart
    public typealias OutboundIn = HTTPServerResponsePart
    public typealias OutboundOut = HTTPServerResponsePart

    public struct Rule: Sendable, Equatable {
        public var bytesPerSecond: Int
        public var grace: TimeAmount

        /// Kestrel's defaults: 240 bytes a second after 5 seconds.
        public init(bytesPerSecond: Int = 240, grace: TimeAmount = .seconds(5)) {
            self.bytesPerSecond = bytesPerSecond
            self.grace = grace
        }
    }

    private struct Body {
        var bytes = 0
        /// Time spent waiting on the client, up to `waitingSince`.
        var waited: TimeAmount = .zero
    }

    private let rule: Rule
    /// The body being received, between a request's head and its end.
    private var body: Body?
    /// When the server last asked for bytes that have not arrived yet.
    private var waitingSince: NIODeadline?
    private var check: RepeatedTask?

    public init(rule: Rule) {
        self.rule = rule
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        stopWaiting(now: context.eventLoop.now)
        switch unwrapInboundIn(data) {
        case .head:
            body = Body()
            startChecking(context: context)
        case .body(let buffer):
            body?.bytes += buffer.readableBytes
        case .end:
            // The check stops at its next tick, unless another request's body is on its way by then.
            body = nil
        }
        context.fireChannelRead(data)
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        // Bytes arrived, whole parts or not (a part of a head, a chunk size).
        stopWaiting(now: context.eventLoop.now)
        context.fireChannelReadComplete()
    }

    public func read(context: ChannelHandlerContext) {
        if waitingSince == nil { waitingSince = context.eventLoop.now }
        context.read()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        stopChecking()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stopChecking()
    }

    private func stopWaiting(now: NIODeadline) {
        guard let since = waitingSince else { return }
        waitingSince = nil
        body?.waited += now - since
    }

    private func startChecking(context: ChannelHandlerContext) {
        guard check == nil else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            let (guardian, context) = loopBound.value
            guardian.closeIfTooSlow(context: context)
        }
    }

    private func stopChecking() {
        check?.cancel()
        check = nil
    }

    private func closeIfTooSlow(context: ChannelHandlerContext) {
        guard let body else { return stopChecking() }
        let now = context.eventLoop.now
        let waited = body.waited + (waitingSince.map { now - $0 } ?? .zero)
        guard waited > rule.grace else { return }
        let expected = Int64(rule.bytesPerSecond) * waited.nanoseconds / 1_000_000_000
        guard Int64(body.bytes) < expected else { return }
        Counter(label: "gateway_http_slow_body_closes_total").increment()
        stopChecking()
        context.close(promise: nil)
    }
}
