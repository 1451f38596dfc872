/// Sliding-window-counter math. Counts live in fixed windows of the policy's
/// period; the rate at any moment is the current window's count plus the
/// previous window's, weighted by how much of it still overlaps the last
/// period. Unlike fixed windows, a burst at a window edge cannot pass twice
/// the limit. No I/O: storage only adds to counts and reads them back.
public struct SlidingWindow: Sendable, Equatable {
    /// The verdict on one policy for one subject.
    public struct Verdict: Sendable, Equatable {
        public let allowed: Bool
        /// How many more counted events would pass now.
        public let remaining: Int
        /// Seconds until a further event would pass (0 when one would now):
        /// the `Retry-After` of a refusal, and the `t` of the `RateLimit`
        /// header, so both say the same.
        public let retryAfterSeconds: Int
    }

    public let policy: RateLimitPolicy
    /// Start of the current window, in seconds since the epoch.
    public let windowStart: Int64
    /// How far into the current window `now` is, 0 ..< 1.
    public let elapsedFraction: Double

    public init(policy: RateLimitPolicy, now: Double) {
        self.policy = policy
        let period = Double(policy.periodSeconds)
        let start = (now / period).rounded(.down) * period
        self.windowStart = Int64(start)
        self.elapsedFraction = min(max((now - start) / period, 0), 0.999_999)
    }

    /// The start of the window before the current one.
    public var previousWindowStart: Int64 { windowStart - Int64(policy.periodSeconds) }

    /// How much of the previous window's count still weighs, 0 < w <= 1.
    public var previousWeight: Double { 1 - elapsedFraction }

    /// The weighted count of the last period.
    public func estimate(current: Int, previous: Int) -> Double {
        Double(previous) * previousWeight + Double(current)
    }

    /// Whether an event that `current` already includes fits the limit.
    /// PostgreSQL makes the same test when it counts (see
    /// ``SlidingWindowSQL``); a reservation it grants fits by construction.
    public func allows(current: Int, previous: Int) -> Bool {
        estimate(current: current, previous: previous) <= Double(policy.limit)
    }

    /// What one touch of `units` (``CounterTouch/units``) does to a counter
    /// whose current window holds `current` and whose previous window held
    /// `previous`, and its verdict:
    /// the semantics of each ``CounterTouch/Mode``. PostgreSQL applies the
    /// same in ``SlidingWindowSQL``, beside this file, and
    /// `RateLimitAgreementTests` holds the two to one table and to random
    /// sequences; ``MemoryCounters`` keeps counters with this.
    public func touch(_ mode: CounterTouch.Mode, units: Int = 1, current: Int, previous: Int) -> CounterReading {
        switch mode {
        case .count:
            return CounterReading(current: current + 1, previous: previous, allowed: allows(current: current + 1, previous: previous))
        case .reserve:
            let granted = min(units, room(current: current, previous: previous))
            return CounterReading(current: current + granted, previous: previous, allowed: granted > 0, granted: granted)
        case .release:
            return CounterReading(current: max(0, current - units), previous: previous, allowed: true)
        case .read:
            return CounterReading(current: current, previous: previous, allowed: allows(current: current + 1, previous: previous))
        }
    }

    /// How many more events fit now: the largest `k` for which
    /// previous × weight + current + k is at most the limit, computed as
    /// PostgreSQL computes it (``SlidingWindowSQL``: the limit less the
    /// weighted previous window, rounded down, less the current).
    public func room(current: Int, previous: Int) -> Int {
        max(Int((Double(policy.limit) - Double(previous) * previousWeight).rounded(.down)) - current, 0)
    }

    /// The verdict on an event that `current` already includes.
    public func verdict(current: Int, previous: Int) -> Verdict {
        verdict(current: current, previous: previous, allowed: allows(current: current, previous: previous))
    }

    /// The verdict when storage decided `allowed`: `current` includes this
    /// event only if it was counted (a granted reservation, a count), not
    /// when it was only read or refused a reservation.
    public func verdict(current: Int, previous: Int, allowed: Bool) -> Verdict {
        let remaining = allowed ? max(0, Int((Double(policy.limit) - estimate(current: current, previous: previous)).rounded(.down))) : 0
        return Verdict(
            allowed: allowed, remaining: remaining,
            retryAfterSeconds: remaining > 0 ? 0 : secondsUntilOneMoreFits(current: current, previous: previous))
    }

    /// The least time after which one more event fits, if nothing else counts meanwhile.
    func secondsUntilOneMoreFits(current: Int, previous: Int) -> Int {
        let period = Double(policy.periodSeconds)
        let room = Double(policy.limit) - 1  // what the others may weigh when the next one is added
        let current = Double(current)
        let previous = Double(previous)
        // Within this window, the previous window's weight decays.
        if current <= room, previous > 0 {
            let fractionNeeded = 1 - (room - current) / previous
            let wait = (fractionNeeded - elapsedFraction) * period
            return max(1, Int(wait.rounded(.up)))
        }
        // Otherwise this window's count must itself decay in the next one.
        let untilNextWindow = (1 - elapsedFraction) * period
        let intoNext = current > 0 ? max(0, (1 - room / current) * period) : 0
        return max(1, Int((untilNextWindow + intoNext).rounded(.up)))
    }
}
