import NIOCore
import NIOPosix

/// A tenant's service that answers every request with `head` (a status line,
/// headers and the first bytes of a body) and then says nothing more while
/// keeping the connection open: a body that promises more than it sends.
final class StallingHTTPServer: Sendable {
    private let channel: any Channel

    private init(channel: any Channel) {
        self.channel = channel
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    static func with<Result>(
        answering head: String, _ body: (StallingHTTPServer) async throws -> Result
    ) async throws -> Result {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture { try child.pipeline.syncOperations.addHandler(Answerer(head: head)) }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = StallingHTTPServer(channel: channel)
        do {
            let result = try await body(server)
            try await channel.close()
            return result
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Answers the first bytes of a connection, then only reads.
    private final class Answerer: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let head: String
        var answered = false

        init(head: String) { self.head = head }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !answered else { return }
            answered = true
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: head)), promise: nil)
        }
    }
}
