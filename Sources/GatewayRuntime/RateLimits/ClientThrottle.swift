public import GatewayCore
public import Foundation
import Synchronization

/// A per-client-address limit kept in this replica's memory, for requests
/// whose cost is the database round trip a limit in PostgreSQL would add
/// again: admin requests with a bad token (and so console sign-ins), and
/// token validation. Sliding-window counts as ``SlidingWindow`` computes
/// them, per address (an IPv6 client by its range, as the shared limits
/// count it); each replica counts on its own, so the deployment allows at
/// most the limit times the replicas. At most ``capacity`` addresses are
/// held: past that, those whose windows have passed are forgotten, and if
/// none has, the oldest.
public final class ClientThrottle: Sendable {
    public static let capacity = 10_000

    private struct Count {
        var windowStart: Int64
        var current: Int
        var previous: Int
    }

    public let policy: RateLimitPolicy
    private let settings: RateLimitSettings
    private let now: @Sendable () -> Double
    private let counts = Mutex<[String: Count]>([:])

    /// - Parameter policy: its limit and period as `settings` set them (the
    ///   deployment's configuration), else as given.
    public init(
        policy: RateLimitPolicy, settings: RateLimitSettings, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }
    ) {
        self.policy = settings.policies[policy.name] ?? policy
        self.settings = settings
        self.now = now
    }

    /// A unit ``take(_:)`` counted: for whom, and in which window.
    public struct Unit: Sendable {
        let key: String
        let windowStart: Int64
    }

    /// Counts one for `client` and returns it, or throws the 429 (counting
    /// nothing) when it has no room left. Off (`nil`) when rate limits are off.
    @discardableResult
    public func take(_ client: String?) throws(GatewayError) -> Unit? {
        guard settings.isEnabled else { return nil }
        let window = SlidingWindow(policy: policy, now: now())
        let key = settings.subject(forClient: client ?? "unknown")
        let refusedFor = counts.withLock { counts -> Int? in
            var count = counts[key].map { Self.aligned($0, to: window) } ?? Count(windowStart: window.windowStart, current: 0, previous: 0)
            let reservation = window.touch(.reserve, current: count.current, previous: count.previous)
            guard reservation.allowed else {
                return window.verdict(current: count.current + 1, previous: count.previous, allowed: false).retryAfterSeconds
            }
            count.current = reservation.current
            if counts[key] == nil, counts.count >= Self.capacity { Self.makeRoom(&counts, window: window) }
            counts[key] = count
            return nil
        }
        if let seconds = refusedFor {
            throw GatewayError(
                .rateLimited, .tooManyRequests, "Too many requests from this address; retry after \(seconds) seconds.",
                retryAfterSeconds: seconds)
        }
        return Unit(key: key, windowStart: window.windowStart)
    }

    /// Gives back a unit ``take(_:)`` counted (the attempt succeeded, and
    /// only failures count), to the window it was counted in: taken just
    /// before a window's edge, it leaves the previous window's count, which
    /// still weighs on the next.
    public func giveBack(_ unit: Unit?) {
        guard let unit else { return }
        let window = SlidingWindow(policy: policy, now: now())
        counts.withLock { counts in
            guard var count = counts[unit.key].map({ Self.aligned($0, to: window) }) else { return }
            if unit.windowStart == count.windowStart, count.current > 0 {
                count.current -= 1
            } else if unit.windowStart == window.previousWindowStart, count.previous > 0 {
                count.previous -= 1
            }
            counts[unit.key] = count
        }
    }

    /// `count` moved to `window`: its current window becomes the previous one, or both are gone.
    private static func aligned(_ count: Count, to window: SlidingWindow) -> Count {
        if count.windowStart == window.windowStart { return count }
        let previous = count.windowStart == window.previousWindowStart ? count.current : 0
        return Count(windowStart: window.windowStart, current: 0, previous: previous)
    }

    private static func makeRoom(_ counts: inout [String: Count], window: SlidingWindow) {
        counts = counts.filter { $0.value.windowStart >= window.previousWindowStart }
        if counts.count >= capacity, let oldest = counts.min(by: { $0.value.windowStart < $1.value.windowStart }) {
            counts[oldest.key] = nil
        }
    }
}
