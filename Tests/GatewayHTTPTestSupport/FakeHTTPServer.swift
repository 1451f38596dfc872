import Foundation
import Hummingbird
import HTTPTypes
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A local HTTP server standing in for what we do not own (a tenant's
/// webhook, Twilio): it records every request and answers the statuses it
/// is given, in order (then 200); a 3xx carries `Location: location`. Each
/// answer leaves `latency` after its request arrived, like a provider's.
public final class FakeHTTPServer: Sendable {
    public struct Recorded: Sendable {
        public let method: String
        public let path: String
        /// By lowercase name.
        public let headers: [String: String]
        public let body: String
        /// The client's port: one per connection, so requests sharing it came over one kept connection.
        public let clientPort: Int?
    }

    /// What a request is handled with: the client's address besides the basics.
    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        let clientPort: Int?

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            clientPort = source.channel.remoteAddress?.port
        }
    }

    /// What the server answers one request with.
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: String
        /// How long after the request arrived the answer leaves.
        public var delay: Duration

        public init(status: Int = 200, headers: [String: String] = [:], body: String, delay: Duration = .zero) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
        }
    }

    private let recorded = Mutex<[Recorded]>([])

    public var requests: [Recorded] { recorded.withLock { $0 } }

    /// Runs `body` with the server's base URL (`http://127.0.0.1:<port>`).
    public static func with<Result: Sendable>(
        statuses: [Int] = [], location: String = "/", latency: Duration = .zero, _ body: @Sendable (_ baseURL: String, _ server: FakeHTTPServer) async throws -> Result
    ) async throws -> Result {
        let statuses = Mutex(statuses)
        return try await with(
            answering: { _ in
                let status = statuses.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
                return Answer(
                    status: status, headers: (300..<400).contains(status) ? ["Location": location] : [:],
                    body: #"{"provider_detail":"secret provider text"}"#, delay: latency)
            }, body)
    }

    /// Runs `body` with the server's base URL; each request is answered as `answer` says.
    public static func with<Result: Sendable>(
        answering answer: @escaping @Sendable (Recorded) async -> Answer,
        _ body: @Sendable (_ baseURL: String, _ server: FakeHTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = FakeHTTPServer()
        let router = Router(context: Context.self)
        @Sendable func record(_ request: Request, _ context: Context) async throws -> Response {
            let arrived = ContinuousClock.now
            let bytes = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let recorded = Recorded(
                method: request.method.rawValue, path: request.uri.path, headers: headers, body: String(buffer: bytes),
                clientPort: context.clientPort)
            server.recorded.withLock { $0.append(recorded) }
            let answer = await answer(recorded)
            if answer.delay > .zero { try await Task.sleep(until: arrived + answer.delay) }
            var answerHeaders: HTTPFields = [.contentType: "application/json"]
            for (name, value) in answer.headers {
                if let field = HTTPField.Name(name) { answerHeaders[field] = value }
            }
            return Response(
                status: .init(code: answer.status), headers: answerHeaders, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
        }
        router.on("/", method: .post) { request, context in try await record(request, context) }
        router.on("**", method: .post) { request, context in try await record(request, context) }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "fake-http")
        // The gateway keeps connections for reuse; closing them at the end is no error of the test's.
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        // Stopped gracefully, never by cancelling its task: a connection accepted but not yet served
        // when the task is cancelled traps in NIO ("Deinited NIOAsyncWriter without calling finish()",
        // swift-nio issue 3481). Graceful shutdown closes the idle connections the gateway keeps.
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            let result: Swift.Result<Result, any Error>
            var iterator = ports.makeAsyncIterator()
            if let port = await iterator.next() {
                do {
                    result = .success(try await body("http://127.0.0.1:\(port)", server))
                } catch {
                    result = .failure(error)
                }
            } else {
                result = .failure(CancellationError())
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return try result.get()
        }
    }
}
