import AsyncHTTPClient
import GatewayCore
import NIOCore
import Synchronization

/// HTTP clients kept for calls out of the gateway, one per app, host and
/// checked address, each pinned to its address (``OutboundAddressPolicy``)
/// and keeping its connections for that app's next call.
///
/// At most ``capacity`` clients in all and ``perSubject`` for one app: a new
/// client makes room by retiring the least recently used one of the same app
/// when the app holds its share, else the least recently used of all. A
/// retired client takes no new calls and shuts down once its last call has
/// ended, so making room never cancels anyone's call in flight, and an app
/// cycling its URL through many hosts only ever retires its own clients.
public final class OutboundClientPool: Sendable {
    /// The process's pool, shared by every plugin.
    public static let shared = OutboundClientPool()

    public let capacity: Int
    public let perSubject: Int

    private struct Entry {
        let client: HTTPClient
        let subject: String
        var lastUse: UInt64
        var calls = 0
    }

    private struct State {
        var clients: [String: Entry] = [:]
        /// Clients no longer handed out, by identity, with the calls they still carry.
        var retiring: [ObjectIdentifier: (client: HTTPClient, calls: Int)] = [:]
        var uses: UInt64 = 0
    }

    private let state = Mutex(State())

    public init(capacity: Int = 64, perSubject: Int = 8) {
        precondition(capacity >= perSubject && perSubject > 0)
        self.capacity = capacity
        self.perSubject = perSubject
    }

    deinit {
        let clients = state.withLock { state in state.clients.values.map(\.client) + state.retiring.values.map(\.client) }
        for client in clients { Self.shutDown(client) }
    }

    /// How many clients are kept for new calls, and how many retired ones still finish theirs.
    public var counts: (kept: Int, retiring: Int) {
        state.withLock { ($0.clients.count, $0.retiring.count) }
    }

    /// How many clients are kept for `subject`'s calls.
    public func clientCount(for subject: String) -> Int {
        state.withLock { $0.clients.values.filter { $0.subject == subject }.count }
    }

    /// Runs `call` with the client for `subject`'s calls to `host` at `address`.
    func withClient<Result>(
        for subject: String, host: String, address: IPAddress?,
        _ call: (HTTPClient) async throws(OutboundFailure) -> Result
    ) async throws(OutboundFailure) -> Result {
        let key = "\(subject)|\(host)|\(address?.description ?? "")"
        let (client, idle) = acquire(key, subject: subject, host: host, address: address)
        if let idle { Self.shutDown(idle) }
        defer { release(key, client) }
        return try await call(client)
    }

    private func acquire(_ key: String, subject: String, host: String, address: IPAddress?) -> (HTTPClient, idle: HTTPClient?) {
        state.withLock { state in
            state.uses += 1
            if var entry = state.clients[key] {
                entry.lastUse = state.uses
                entry.calls += 1
                state.clients[key] = entry
                return (entry.client, nil)
            }
            let own = state.clients.filter { $0.value.subject == subject }
            let victim: String? =
                if own.count >= perSubject { own.min { $0.value.lastUse < $1.value.lastUse }?.key }
                else if state.clients.count >= capacity { state.clients.min { $0.value.lastUse < $1.value.lastUse }?.key }
                else { nil }
            var idle: HTTPClient?
            if let victim, let retired = state.clients.removeValue(forKey: victim) {
                if retired.calls == 0 {
                    idle = retired.client
                } else {
                    state.retiring[ObjectIdentifier(retired.client)] = (retired.client, retired.calls)
                }
            }
            let client = Self.makeClient(host: host, address: address)
            state.clients[key] = Entry(client: client, subject: subject, lastUse: state.uses, calls: 1)
            return (client, idle)
        }
    }

    private func release(_ key: String, _ client: HTTPClient) {
        let idle = state.withLock { state -> HTTPClient? in
            if var entry = state.clients[key], entry.client === client {
                entry.calls -= 1
                state.clients[key] = entry
                return nil
            }
            let id = ObjectIdentifier(client)
            guard var retiring = state.retiring[id] else { return nil }
            retiring.calls -= 1
            guard retiring.calls == 0 else {
                state.retiring[id] = retiring
                return nil
            }
            state.retiring[id] = nil
            return retiring.client
        }
        if let idle { Self.shutDown(idle) }
    }

    private static func shutDown(_ client: HTTPClient) {
        Task { try? await client.shutdown() }
    }

    private static func makeClient(host: String, address: IPAddress?) -> HTTPClient {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 32)
        // A refused connection is an answer now, not one to wait out to the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        if let address { configuration.dnsOverride = [host: address.description] }
        // The client's own spans would record the URL, whose path or query may hold a tenant's secret:
        // OutboundHTTP makes the span instead.
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
