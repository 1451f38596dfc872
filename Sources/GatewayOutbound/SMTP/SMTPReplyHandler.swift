import NIOCore

/// The channel's end of an SMTP connection: reads replies
/// (``SMTPReplyReader``) and hands them, one at a time, to whoever waits
/// (``nextReply()``). Lives on its event loop; ``SMTPConnection`` reaches it
/// through `NIOLoopBound`.
final class SMTPReplyHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var reader = SMTPReplyReader()
    private var replies: [SMTPReply] = []
    private var waiting: EventLoopPromise<SMTPReply>?
    private var failure: SMTPFailure?
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Whether anything arrived that no command asked for yet.
    var holdsAnything: Bool { reader.holdsAnything || !replies.isEmpty }

    /// The next reply, or the failure that ended the connection.
    func nextReply(on loop: any EventLoop) -> EventLoopFuture<SMTPReply> {
        if !replies.isEmpty { return loop.makeSucceededFuture(replies.removeFirst()) }
        if let failure { return loop.makeFailedFuture(failure) }
        let promise = loop.makePromise(of: SMTPReply.self)
        waiting = promise
        return promise.futureResult
    }

    /// Ends the connection with `failure` (the exchange's deadline passed).
    func end(with failure: SMTPFailure) {
        fail(failure)
        context?.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        do {
            replies += try reader.read(buffer.readableBytesView)
        } catch {
            end(with: SMTPFailure(.protocolViolation, error.description))
            return
        }
        if let waiting, !replies.isEmpty {
            self.waiting = nil
            waiting.succeed(replies.removeFirst())
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOSSL reports a failed handshake (an untrusted certificate, another name) here.
        let text = String(describing: error)
        end(with: SMTPFailure(text.contains("handshake") || text.contains("certificate") ? .tlsFailed : .noConnection, "TLS or connection error: \(text)"))
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(SMTPFailure(.noConnection, "the server closed the connection"))
        context.fireChannelInactive()
    }

    private func fail(_ failure: SMTPFailure) {
        if self.failure == nil { self.failure = failure }
        if let waiting {
            self.waiting = nil
            waiting.fail(self.failure ?? failure)
        }
    }
}
