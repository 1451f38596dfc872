import Foundation
import Hummingbird
import HTTPTypes
import Logging
import NIOCore
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
    }

    private let state = Mutex<(requests: [Recorded], statuses: [Int])>(([], []))

    public var requests: [Recorded] { state.withLock { $0.requests } }

    /// Runs `body` with the server's base URL (`http://127.0.0.1:<port>`).
    public static func with<Result: Sendable>(
        statuses: [Int] = [], location: String = "/", latency: Duration = .zero, _ body: @Sendable (_ baseURL: String, _ server: FakeHTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = FakeHTTPServer()
        server.state.withLock { $0.statuses = statuses }
        let router = Router()
        @Sendable func record(_ request: Request) async throws -> Response {
            let bytes = try await request.body.collect(upTo: 1 << 20)
            if latency > .zero { try await Task.sleep(for: latency) }
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let status = server.state.withLock { state -> Int in
                state.requests.append(
                    Recorded(method: request.method.rawValue, path: request.uri.path, headers: headers, body: String(buffer: bytes)))
                return state.statuses.isEmpty ? 200 : state.statuses.removeFirst()
            }
            var answerHeaders: HTTPFields = [.contentType: "application/json"]
            if (300..<400).contains(status) { answerHeaders[.location] = location }
            return Response(
                status: .init(code: status), headers: answerHeaders,
                body: .init(byteBuffer: ByteBuffer(string: #"{"provider_detail":"secret provider text"}"#)))
        }
        router.on("/", method: .post) { request, _ in try await record(request) }
        router.on("**", method: .post) { request, _ in try await record(request) }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "fake-http")
        logger.logLevel = .warning
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            return try await body("http://127.0.0.1:\(port)", server)
        }
    }
}
