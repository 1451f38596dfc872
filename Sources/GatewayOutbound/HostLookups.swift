public import GatewayCore
import NIOPosix
import Synchronization

/// Name lookups for calls out of the gateway, bounded so that apps whose
/// hosts' name servers never answer cannot hold up anyone else's calls:
/// - lookups of one host at once share one question to the resolver;
/// - a failed lookup is remembered and answered at once meanwhile, for
///   ``failureLifetime`` after the first failure, doubling with each failure
///   in a row up to ``longestFailureLifetime``, so a dead name server is
///   asked once a while, not once a call;
/// - one subject (an app) has at most ``perSubject`` lookups of its own in
///   flight; past that its calls fail at once instead of queueing;
/// - hosts that failed within ``failingMemory`` share at most
///   ``failingShare`` lookups in flight, whichever apps ask, so the hosts of
///   a few apps with dead name servers never hold more than that share of
///   the resolver's threads: the rest stay for hosts that answer. (A host's
///   first failure, before it is known, still takes a thread of its own
///   subject's share for one resolver timeout.)
/// - the system resolver runs on ``systemThreads`` threads of its own,
///   never on NIO's shared blocking pool.
///
/// A caller that stops waiting (its deadline passed) leaves the lookup to
/// finish: it still counts against the subject that started it until it does.
public final class HostLookups: Sendable {
    /// Every address a host name stands for.
    public typealias Resolver = @Sendable (String) async throws -> [IPAddress]

    public static let failureLifetime = Duration.seconds(5)
    public static let longestFailureLifetime = Duration.seconds(60)
    public static let failingMemory = Duration.seconds(300)
    public static let perSubject = 2
    /// Threads for the system's `getaddrinfo`, shared by every subject
    /// (at most ``perSubject`` each), for the process's life.
    public static let systemThreads = 8
    /// Lookups of failing hosts in flight at once, of every subject together.
    public static let failingShare = systemThreads / 2

    /// A host whose lookups failed.
    private struct Failure {
        /// Until when its lookups are answered from memory.
        var until: ContinuousClock.Instant
        /// When it last failed, and how many times in a row.
        var at: ContinuousClock.Instant
        var inARow: Int
    }

    private struct State {
        var inFlight: [String: Task<[IPAddress], any Error>] = [:]
        var startedBy: [String: Int] = [:]
        var failures: [String: Failure] = [:]
        /// Hosts among `inFlight` that had failed before their lookup started.
        var failingInFlight: Set<String> = []
    }

    private let resolve: Resolver
    private let perSubject: Int
    private let failingShare: Int
    private let failureLifetime: Duration
    private let state = Mutex(State())

    /// The process's lookups through the system resolver, shared by every
    /// plugin, so an app's share of them holds across its webhook and its SMS sender.
    public static let system = HostLookups()

    /// `resolve` replaces the system resolver, and the other values the
    /// defaults (tests).
    public init(
        resolve: Resolver? = nil, perSubject: Int = HostLookups.perSubject, failingShare: Int = HostLookups.failingShare,
        failureLifetime: Duration = HostLookups.failureLifetime
    ) {
        self.resolve = resolve ?? { host in try await SystemResolver.shared.addresses(of: host) }
        self.perSubject = perSubject
        self.failingShare = failingShare
        self.failureLifetime = failureLifetime
    }

    /// Every address `host` stands for, looked up for `subject`.
    public func addresses(of host: String, for subject: String) async throws(OutboundFailure) -> [IPAddress] {
        let now = ContinuousClock.now
        let lookup = state.withLock { state -> Result<Task<[IPAddress], any Error>, OutboundFailure> in
            if let running = state.inFlight[host] { return .success(running) }
            let failing = state.failures[host].map { now - $0.at < Self.failingMemory } ?? false
            if let failure = state.failures[host], failure.until > now {
                return .failure(OutboundFailure(.noAnswer, "the host \(host) did not resolve (a moment ago)"))
            }
            guard state.startedBy[subject, default: 0] < perSubject else {
                return .failure(OutboundFailure(.noAnswer, "too many name lookups in flight for this app"))
            }
            if failing {
                guard state.failingInFlight.count < failingShare else {
                    return .failure(OutboundFailure(.noAnswer, "the host \(host) did not resolve lately, and other failing hosts hold the lookups"))
                }
                state.failingInFlight.insert(host)
            }
            state.startedBy[subject, default: 0] += 1
            let task = Task { [resolve] in
                do {
                    let addresses = try await resolve(host)
                    self.finished(host, startedBy: subject, failed: false)
                    return addresses
                } catch {
                    self.finished(host, startedBy: subject, failed: true)
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

    private func finished(_ host: String, startedBy subject: String, failed: Bool) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.inFlight[host] = nil
            state.failingInFlight.remove(host)
            state.startedBy[subject, default: 1] -= 1
            if state.startedBy[subject] == 0 { state.startedBy[subject] = nil }
            guard failed else {
                state.failures[host] = nil
                return
            }
            if state.failures.count >= 1024 {
                state.failures = state.failures.filter { now - $0.value.at < Self.failingMemory }
            }
            let inARow = (state.failures[host].map { now - $0.at < Self.failingMemory ? $0.inARow : 0 } ?? 0) + 1
            let lifetime = min(failureLifetime * (1 << min(inARow - 1, 10)), max(failureLifetime, Self.longestFailureLifetime))
            state.failures[host] = Failure(until: now + lifetime, at: now, inARow: inARow)
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
