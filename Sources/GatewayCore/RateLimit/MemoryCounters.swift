/// Rate-limit counters kept in memory, each touch applied as
/// ``SlidingWindow/touch(_:current:previous:)`` says: the ledger of the
/// in-memory stores the tests run the gateway over, and the Swift side of
/// `RateLimitAgreementTests`. Windows are kept until the value goes away:
/// not for a long-running server.
public struct MemoryCounters: Sendable {
    private struct Key: Hashable {
        let appID: AppID
        let policy: String
        let subject: String
        let windowStart: Int64
    }

    private var counts: [Key: Int] = [:]

    public init() {}

    /// Applies `touch` and reads its counter back.
    public mutating func apply(_ touch: CounterTouch) -> CounterReading {
        func key(_ windowStart: Int64) -> Key {
            Key(appID: touch.appID, policy: touch.window.policy.name, subject: touch.subject, windowStart: windowStart)
        }
        let current = key(touch.window.windowStart)
        let reading = touch.window.touch(
            touch.mode, units: touch.units, current: counts[current, default: 0],
            previous: counts[key(touch.window.previousWindowStart), default: 0])
        counts[current] = reading.current
        return reading
    }
}
