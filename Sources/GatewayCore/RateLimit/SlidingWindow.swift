/// Sliding-window-counter math. Counts live in fixed windows of the policy's
/// period; the rate at any moment is the current window's count plus the
/// previous window's, weighted by how much of it still overlaps the last
/// period. What it guarantees: at most `limit` events in each fixed window,
/// and at most twice `limit` in any span of one period (a full previous
/// window at its very end, and the current window's share as its weight
/// fades). No I/O: storage only adds to counts and reads them back.
///
/// For one period after the policy's period changed
/// (``RateLimitPolicy/periodChangedAt``) the windows of the new period hold
/// only what came after the change, so the test is stricter: the previous
/// window weighs in full, and the limit is what the old period could no
/// longer have spent, `limit` × (time since the change) / period, as if the
/// whole limit had been spent at the change. A change of period refuses early
/// for a while; it never lets more through.
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

    /// How much of the previous window's count weighs now, 0 < w <= 1:
    /// what still overlaps the last period, or all of it just after a change
    /// of period.
    public let previousWeight: Double
    /// The limit the test holds the weighted count to now: the policy's, or
    /// less just after a change of period.
    public let limit: Double
    /// Seconds since the period changed, while that still weighs (less than a period).
    let sinceChange: Double?

    public init(policy: RateLimitPolicy, now: Double) {
        self.policy = policy
        let period = Double(policy.periodSeconds)
        let start = (now / period).rounded(.down) * period
        self.windowStart = Int64(start)
        let elapsedFraction = min(max((now - start) / period, 0), 0.999_999)
        self.elapsedFraction = elapsedFraction
        if let changedAt = policy.periodChangedAt.map(Double.init), now - changedAt < period {
            let sinceChange = max(now - changedAt, 0)
            self.sinceChange = sinceChange
            self.previousWeight = 1
            self.limit = Double(policy.limit) * sinceChange / period
        } else {
            self.sinceChange = nil
            self.previousWeight = 1 - elapsedFraction
            self.limit = Double(policy.limit)
        }
    }

    /// The start of the window before the current one.
    public var previousWindowStart: Int64 { windowStart - Int64(policy.periodSeconds) }

    /// The weighted count of the last period.
    public func estimate(current: Int, previous: Int) -> Double {
        Double(previous) * previousWeight + Double(current)
    }

    /// Whether an event that `current` already includes fits the limit.
    /// PostgreSQL makes the same test when it counts (see
    /// ``SlidingWindowSQL``); a reservation it grants fits by construction.
    public func allows(current: Int, previous: Int) -> Bool {
        estimate(current: current, previous: previous) <= limit
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
        max(Int((limit - Double(previous) * previousWeight).rounded(.down)) - current, 0)
    }

    /// The verdict on an event that `current` already includes.
    public func verdict(current: Int, previous: Int) -> Verdict {
        verdict(current: current, previous: previous, allowed: allows(current: current, previous: previous))
    }

    /// The verdict when storage decided `allowed`: `current` includes this
    /// event only if it was counted (a granted reservation, a count), not
    /// when it was only read or refused a reservation.
    public func verdict(current: Int, previous: Int, allowed: Bool) -> Verdict {
        let remaining = allowed ? max(0, Int((limit - estimate(current: current, previous: previous)).rounded(.down))) : 0
        return Verdict(
            allowed: allowed, remaining: remaining,
            retryAfterSeconds: remaining > 0 ? 0 : secondsUntilOneMoreFits(current: current, previous: previous))
    }

    /// The least time after which one more event fits, if nothing else counts meanwhile.
    func secondsUntilOneMoreFits(current: Int, previous: Int) -> Int {
        let period = Double(policy.periodSeconds)
        if let sinceChange {
            // The limit grows by limit / period a second until the change is a period old.
            let needed = Double(previous + current + 1) * period / Double(policy.limit)
            return max(1, Int((min(needed, period) - sinceChange).rounded(.up)))
        }
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
