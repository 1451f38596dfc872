import CoreMetrics
import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayOutbound
import Logging
import NIOCore
import Synchronization

/// The providers' key sets, fetched through the kit's outbound rules
/// (``OutboundHTTP``: address policy, a timeout over the whole exchange, a
/// size bound, no redirects) and kept in this process per key location.
///
/// - A set is kept for the provider's `Cache-Control: max-age`, held
///   between 5 minutes and a day (an hour when it gives none).
/// - A token naming a key the set lacks (``refreshed(_:for:logger:)``)
///   fetches again, but at most once a minute per location: tokens with
///   made-up `kid`s cannot make the gateway hammer a provider.
/// - Concurrent fetches of one location are one fetch.
/// - A failed fetch keeps the last good set, and no fetch is tried again for
///   10 s: meanwhile a request with no set to use is answered at once as the
///   provider being unavailable (502), like an open circuit breaker.
///
/// Each app has entries of its own, even for the same URL, so one app's
/// fetches (made under its own share of the outbound lookups and
/// connections) can neither fail nor throttle another app's, and an app holds
/// at most ``entriesPerApp`` entries: one that cycles its providers' URLs
/// drops its own least recently used entry. Replicas do not share this:
/// each fetches for itself.
final class ProviderKeys: Sendable {
    struct Timing: Sendable {
        var shortestKeep: Duration = .seconds(300)
        var longestKeep: Duration = .seconds(86_400)
        var keepWithoutMaxAge: Duration = .seconds(3600)
        var refetchInterval: Duration = .seconds(60)
        var failureBackoff: Duration = .seconds(10)
        var fetchTimeout: Duration = .seconds(5)
    }

    /// Whose entry, for which key location.
    private struct EntryKey: Hashable {
        let app: String
        let location: IDTokenProvider.KeyLocation
    }

    private struct Entry {
        var lastUsed: ContinuousClock.Instant
        var keys: ProviderKeySet?
        var keepUntil: ContinuousClock.Instant?
        var lastFetch: ContinuousClock.Instant?
        var lastFailure: ContinuousClock.Instant?
        var inFlight: Task<ProviderKeySet, any Error>?
    }

    private enum Step {
        case use(ProviderKeySet)
        case wait(Task<ProviderKeySet, any Error>)
        case unavailable
    }

    static let maximumDocumentBytes = ProviderKeySet.maximumBytes
    /// Twice the providers an app may list: room for a change of its options.
    static let entriesPerApp = 2 * IDTokenOptions.maximumProviders

    private let outbound: OutboundHTTP
    private let timing: Timing
    private let clock = ContinuousClock()
    private let entries = Mutex<[EntryKey: Entry]>([:])

    init(outbound: OutboundHTTP, timing: Timing = Timing()) {
        self.outbound = outbound
        self.timing = timing
    }

    /// The location's keys, from memory while they are fresh.
    func keys(
        _ location: IDTokenProvider.KeyLocation, for subject: String, logger: Logger
    ) async throws(ProviderUnavailable) -> ProviderKeySet {
        try await obtain(location, for: subject, refresh: false, logger: logger)
    }

    /// The location's keys after a token named a key they lack: fetched again
    /// unless they were fetched within the refetch interval.
    func refreshed(
        _ location: IDTokenProvider.KeyLocation, for subject: String, logger: Logger
    ) async throws(ProviderUnavailable) -> ProviderKeySet {
        try await obtain(location, for: subject, refresh: true, logger: logger)
    }

    private func obtain(
        _ location: IDTokenProvider.KeyLocation, for subject: String, refresh: Bool, logger: Logger
    ) async throws(ProviderUnavailable) -> ProviderKeySet {
        let now = clock.now
        let key = EntryKey(app: subject, location: location)
        let step = entries.withLock { entries -> Step in
            if entries[key] == nil { Self.makeRoom(for: subject, in: &entries) }
            var entry = entries[key] ?? Entry(lastUsed: now)
            entry.lastUsed = now
            entries[key] = entry
            if let task = entry.inFlight { return .wait(task) }
            let failedLately = entry.lastFailure.map { now - $0 < timing.failureBackoff } ?? false
            if let keys = entry.keys {
                let fresh = entry.keepUntil.map { now < $0 } ?? false
                let fetchedLately = entry.lastFetch.map { now - $0 < timing.refetchInterval } ?? false
                if (fresh && !refresh) || (refresh && fetchedLately) || failedLately { return .use(keys) }
            } else if failedLately {
                return .unavailable
            }
            let task = Task { try await self.fetch(key, logger: logger) }
            entry.inFlight = task
            entry.lastFetch = now
            entries[key] = entry
            return .wait(task)
        }
        switch step {
        case .use(let keys):
            return keys
        case .unavailable:
            throw ProviderUnavailable()
        case .wait(let task):
            do {
                return try await task.value
            } catch {
                if let kept = entries.withLock({ $0[key]?.keys }) { return kept }
                throw ProviderUnavailable()
            }
        }
    }

    /// Drops `app`'s least recently used entry with no fetch in flight when it holds ``entriesPerApp``.
    private static func makeRoom(for app: String, in entries: inout [EntryKey: Entry]) {
        let own = entries.filter { $0.key.app == app }
        guard own.count >= entriesPerApp,
            let oldest = own.filter({ $0.value.inFlight == nil }).min(by: { $0.value.lastUsed < $1.value.lastUsed })
        else { return }
        entries[oldest.key] = nil
    }

    /// Entries `app` holds now (for tests).
    func entryCount(for app: String) -> Int {
        entries.withLock { $0.keys.filter { $0.app == app }.count }
    }

    /// One fetch (two for a discovery document), remembered in the entry either way.
    private func fetch(_ key: EntryKey, logger: Logger) async throws -> ProviderKeySet {
        let location = key.location
        do {
            let (keys, keep) = try await download(location, for: key.app, logger: logger)
            let now = clock.now
            entries.withLock { entries in
                entries[key] = Entry(
                    lastUsed: entries[key]?.lastUsed ?? now, keys: keys, keepUntil: now + keep, lastFetch: now,
                    lastFailure: nil, inFlight: nil)
            }
            Self.count("fetched")
            return keys
        } catch {
            let now = clock.now
            entries.withLock { entries in
                entries[key]?.inFlight = nil
                entries[key]?.lastFailure = now
            }
            Self.count("failed")
            logger.warning(
                "an identity provider's keys could not be fetched; the last good keys stay in use",
                metadata: ["url": "\(location.url.absoluteString)", "reason": "\(error)"])
            throw error
        }
    }

    private func download(
        _ location: IDTokenProvider.KeyLocation, for subject: String, logger: Logger
    ) async throws -> (ProviderKeySet, Duration) {
        var jwksURL: URL
        switch location {
        case .jwks(let url):
            jwksURL = url
        case .discovery(let url, let issuers):
            let document = try await get(url, for: subject, logger: logger)
            guard case .object(let members)? = try? JSONCoding.value(document.body.readableBytesView)
            else { throw KeySetProblem("the discovery document is not a JSON object") }
            guard case .string(let issuer)? = members["issuer"], issuers.contains(issuer) else {
                throw KeySetProblem("the discovery document speaks for another issuer than \(issuers[0])")
            }
            guard case .string(let text)? = members["jwks_uri"], let named = URL(string: text),
                ["http", "https"].contains(named.scheme?.lowercased()), named.host != nil
            else { throw KeySetProblem("the discovery document names no jwks_uri") }
            if url.scheme?.lowercased() == "https", named.scheme?.lowercased() != "https" {
                throw KeySetProblem("the discovery document's jwks_uri is not https")
            }
            jwksURL = named
        }
        let answer = try await get(jwksURL, for: subject, logger: logger)
        let keys = try ProviderKeySet(json: Array(buffer: answer.body))
        return (keys, keep(answer.headers["cache-control"]))
    }

    private func get(_ url: URL, for subject: String, logger: Logger) async throws -> OutboundResponse {
        let answer = try await outbound.get(
            url, for: subject, timeout: timing.fetchTimeout, maximumAnswerBytes: Self.maximumDocumentBytes, logger: logger)
        guard answer.status == 200 else { throw KeySetProblem("\(url.host(percentEncoded: false) ?? "") answered \(answer.status)") }
        return answer
    }

    /// How long a set is kept: its `max-age` within bounds.
    func keep(_ cacheControl: String?) -> Duration {
        guard let cacheControl else { return timing.keepWithoutMaxAge }
        let directives = cacheControl.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if directives.contains("no-store") || directives.contains("no-cache") { return timing.shortestKeep }
        guard let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }).flatMap({ Int($0.dropFirst(8)) }) else {
            return timing.keepWithoutMaxAge
        }
        return min(max(.seconds(maxAge), timing.shortestKeep), timing.longestKeep)
    }

    private static func count(_ outcome: String) {
        Counter(label: "gateway_id_token_key_fetches_total", dimensions: [("outcome", outcome)]).increment()
    }
}

/// No key set of the provider could be had: a 502, never a 401.
struct ProviderUnavailable: Error {}
