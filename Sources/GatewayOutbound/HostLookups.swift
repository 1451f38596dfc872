public import GatewayCore
import NIOPosix
import Synchronization

/// Name lookups for calls out of the gateway, bounded so that one app whose
/// host's name server never answers cannot hold up anyone else's calls:
/// - lookups of one host at once share one question to the resolver;
/// - a failed lookup is remembered for ``failureLifetime`` and answered at
///   once meanwhile, so a dead name server is asked once, not once a call;
/// - one subject (an app) has at most ``perSubject`` lookups of its own in
///   flight; past that its calls fail at once instead of queueing;
/// - the system resolver runs on ``systemThreads`` threads of its own,
///   never on NIO's shared blocking pool.
///
/// A caller that stops waiting (its deadline passed) leaves the lookup to
/// finish: it still counts against the subject that started it until it does.
public final class HostLookups: Sendable {
    /// Every address a host name stands for.
    public typealias Resolver = @Sendable (String) async throws -> [IPAddress]

    public static let failureLifetime = Duration.seconds(5)
    public static let perSubject = 2
    /// Threads for the system's `getaddrinfo`, shared by every subject
    /// (at most ``perSubject`` each), for the process's life.
    public static let systemThreads = 8

    private struct State {
        var inFlight: [String: Task<[IPAddress], any Error>] = [:]
        var startedBy: [String: Int] = [:]
        var failedUntil: [String: ContinuousClock.Instant] = [:]
    }

    private let resolve: Resolver
    private let perSubject: Int
    private let state = Mutex(State())

    /// The process's lookups through the system resolver, shared by every
    /// plugin, so an app's share of them holds across its webhook and its SMS sender.
    public static let system = HostLookups()

    /// `resolve` replaces the system resolver (tests).
    public init(resolve: Resolver? = nil, perSubject: Int = HostLookups.perSubject) {
        self.resolve = resolve ?? { host in try await SystemResolver.shared.addresses(of: host) }
        self.perSubject = perSubject
    }

    /// Every address `host` stands for, looked up for `subject`.
    public func addresses(of host: String, for subject: String) async throws(OutboundFailure) -> [IPAddress] {
        let now = ContinuousClock.now
        let lookup = state.withLock { state -> Result<Task<[IPAddress], any Error>, OutboundFailure> in
            if let until = state.failedUntil[host] {
                if until > now { return .failure(OutboundFailure(.noAnswer, "the host \(host) did not resolve (a moment ago)")) }
                state.failedUntil[host] = nil
            }
            if let running = state.inFlight[host] { return .success(running) }
            guard state.startedBy[subject, default: 0] < perSubject else {
                return .failure(OutboundFailure(.noAnswer, "too many name lookups in flight for this app"))
            }
            state.startedBy[subject, default: 0] += 1
            let task = Task { [resolve] in
                defer { self.finished(host, startedBy: subject) }
                do {
                    return try await resolve(host)
                } catch {
                    self.failed(host)
                    throw error
                }
            }
            state.inFlight[host] = task
            return .success(task)
        }
        do {
            return try await lookup.get().value
        } catch let failure as OutboundFailure {
            throw failure
        } catch {
            throw OutboundFailure(.noAnswer, "the host \(host) did not resolve")
        }
    }

    private func failed(_ host: String) {
        let until = ContinuousClock.now + Self.failureLifetime
        state.withLock { state in
            if state.failedUntil.count >= 1024 { state.failedUntil = state.failedUntil.filter { $0.value > ContinuousClock.now } }
            state.failedUntil[host] = until
        }
    }

    private func finished(_ host: String, startedBy subject: String) {
        state.withLock { state in
            state.inFlight[host] = nil
            state.startedBy[subject, default: 1] -= 1
            if state.startedBy[subject] == 0 { state.startedBy[subject] = nil }
        }
    }
}

/// The system's `getaddrinfo` on threads of its own.
final class SystemResolver: Sendable {
    static let shared = SystemResolver(threads: HostLookups.systemThreads)

    private let pool: NIOThreadPool

    init(threads: Int) {
        pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
    }

    func addresses(of host: String) async throws -> [IPAddress] {
        try await pool.runIfActive { try OutboundAddressPolicy.systemResolve(host) }
    }
}
