import NIOCore
import NIOPosix
import Synchronization

/// Raw TCP clients for tests that talk HTTP by hand: to half-close, stall,
/// pipeline, or send a request a byte at a time.
enum RawClient {
    /// A connection that keeps everything it receives, for a client that
    /// half-closes or writes byte by byte and reads the answer afterwards.
    struct ReadingConnection {
        let channel: any Channel
        let collector: Collector
        func received() -> String { collector.text.withLock { $0 } }
    }

    final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let text = Mutex("")

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let chunk = String(buffer: unwrapInboundIn(data))
            text.withLock { $0 += chunk }
        }
    }

    /// With `halfClosing`, the connection stays open for reading after the client closes its sending side.
    static func connectReading(port: Int, halfClosing: Bool = false, noDelay: Bool = false) async throws
        -> ReadingConnection
    {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: halfClosing)
            .channelOption(.socketOption(.tcp_nodelay), value: noDelay ? 1 : 0)
            .channelInitializer { $0.pipeline.addHandler(collector) }
            .connect(host: "127.0.0.1", port: port).get()
        return ReadingConnection(channel: channel, collector: collector)
    }

    /// Talks HTTP by hand on one connection: each step sends its text, then
    /// reads until what came back ends with `until`. Returns the answers read
    /// before the connection closed; none if `limit` passed first (a bound for
    /// a failing test only).
    static func converse(
        port: Int, _ steps: [(send: String, until: String)], within limit: Duration = .seconds(30)
    ) async throws -> [String] {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(
            host: "127.0.0.1", port: port
        ) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
        return await withTaskGroup(of: [String]?.self) { group in
            group.addTask {
                try? await channel.executeThenClose { inbound, outbound in
                    var iterator = inbound.makeAsyncIterator()
                    var answers: [String] = []
                    for step in steps {
                        try await outbound.write(ByteBuffer(string: step.send))
                        var text = ""
                        while !text.hasSuffix(step.until) {
                            guard let chunk = try await iterator.next() else { return answers }
                            text += String(buffer: chunk)
                        }
                        answers.append(text)
                    }
                    return answers
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            channel.channel.close(promise: nil)
            return first ?? []
        }
    }

    /// A connection that reads only when ``firstBytes(of:)`` asks it to, once.
    static func connectWithoutReading(port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .channelInitializer { $0.pipeline.addHandler(FirstBytes()) }
            .connect(host: "127.0.0.1", port: port).get()
    }

    /// Reads once from a ``connectWithoutReading(port:)`` channel; what arrived, as text.
    static func firstBytes(of channel: any Channel) async throws -> String {
        let handler = try await channel.pipeline.handler(type: FirstBytes.self).get()
        let promise = channel.eventLoop.makePromise(of: String.self)
        channel.eventLoop.execute {
            handler.promise = promise
            channel.read()
        }
        return try await promise.futureResult.get()
    }

    final class FirstBytes: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        /// Touched on the channel's event loop only.
        var promise: EventLoopPromise<String>?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            promise?.succeed(String(buffer: unwrapInboundIn(data)))
            promise = nil
        }
    }

    static func connect(port: Int) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
    }

    /// Whether the server closed `channel` before `limit` passed (the limit
    /// only bounds a failing test); the channel is closed either way.
    static func closedByTheServer(_ channel: any Channel, within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await channel.closeFuture.get()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            channel.close(promise: nil)
            group.cancelAll()
            return first
        }
    }
}
